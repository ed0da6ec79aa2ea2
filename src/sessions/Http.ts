import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { orInternal } from "../http/Internal.ts"
import { SessionCreated } from "./Model.ts"
import { Sessions, shownSession } from "./Sessions.ts"

export const SessionsHttpLive = HttpApiBuilder.group(CairnApi, "sessions", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) =>
        sessions
          .getOrCreate({ botId: payload.bot_id, clientId: payload.client_id, dispatchConfig: payload.dispatch_config })
          .pipe(Effect.map((session) => new SessionCreated({ session_id: session.id })), orInternal)
      )
      .handle("messages", ({ path }) => orInternal(sessions.messages(path.id)))
      .handle("legacyList", ({ urlParams }) =>
        sessions
          .list({ botId: urlParams.bot_id, clientId: urlParams.client_id, limit: urlParams.limit })
          .pipe(Effect.map((list) => list.map(shownSession)), orInternal)
      )
      .handle("legacyGet", ({ path }) => orInternal(sessions.withMessages(path.id)))
      .handle("legacyDelete", ({ path }) => orInternal(sessions.remove(path.id)))
  })
)
