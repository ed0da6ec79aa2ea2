/** `/api/v1/admin/skills`: the skill documents a bot may name (the project's and each integration's). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"

export class SkillView extends Schema.Class<SkillView>("SkillView")({
  id: Schema.String,
  title: Schema.String,
  /** Where it comes from: `core` (the project's skills/) or the integration's id. */
  source: Schema.String
}) {}

export class SkillsApi extends HttpApiGroup.make("skills")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/skills")
      .addSuccess(Schema.Struct({ skills: Schema.Array(SkillView) }))
      .annotate(RequiredScope, "bots:read")
      .annotate(OpenApi.Description, "The skills a bot's `skills` may name, by id, with their titles (their content stays on the server)")
  )
  .middleware(Authentication)
{}
