import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { pathParams } from "../contract/Params.ts"
import { BotConflict, BotNotFound } from "./Errors.ts"
import { Bot, BotList, CreateBot, UpdateBot } from "./Model.ts"

const idPath = pathParams({ id: Schema.String })

export class BotsApi extends HttpApiGroup.make("bots")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/bots")
      .addSuccess(BotList)
      .annotate(RequiredScope, "bots:read")
      .annotate(OpenApi.Description, "List bots")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/admin/bots/:id")
      .setPath(idPath)
      .addSuccess(Bot)
      .annotate(RequiredScope, "bots:read")
      .annotate(OpenApi.Description, "Get one bot")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/admin/bots")
      .setPayload(CreateBot)
      .addSuccess(Bot, { status: 201 })
      .annotate(RequiredScope, "bots:write")
      .annotate(OpenApi.Description, "Create a bot")
  )
  .add(
    HttpApiEndpoint.put("update", "/api/v1/admin/bots/:id")
      .setPath(idPath)
      .setPayload(UpdateBot)
      .addSuccess(Bot)
      .annotate(RequiredScope, "bots:write")
      .annotate(OpenApi.Description, "Change a bot (only the fields sent)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/admin/bots/:id")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "bots:delete")
      .annotate(OpenApi.Description, "Delete a bot (not the default bot)")
  )
  .add(
    HttpApiEndpoint.get("legacyList", "/bots")
      .addSuccess(Schema.Array(Bot))
      .annotate(RequiredScope, "bots:read")
      .annotate(OpenApi.Description, "List bots (unversioned, for companion clients)")
  )
  .addError(detailBody(BotNotFound))
  .addError(detailBody(BotConflict))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Bots")
{}
