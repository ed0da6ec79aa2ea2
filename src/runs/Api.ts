/** The run engine's own route: rejoin a session's run and replay its events, then follow it live. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath, queryParams } from "../contract/Params.ts"
import { SessionNotFound } from "../sessions/Errors.ts"
import { RunNotFound } from "./Errors.ts"
import { EventStream } from "./Model.ts"

export class RunsApi extends HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.get("rejoin", "/api/v1/sessions/:id/stream")
      .setPath(idPath("Session"))
      .setUrlParams(
        queryParams({
          after: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())),
          run_id: Schema.optional(Schema.UUID)
        })
      )
      .addSuccess(EventStream)
      .annotate(RequiredScope, "chat")
      .annotate(
        OpenApi.Description,
        "Rejoin the session's latest (or a given) run: events after `after` or the Last-Event-ID header, then live ones"
      )
  )
  .addError(detailBody(SessionNotFound))
  .addError(detailBody(RunNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Chat")
{}
