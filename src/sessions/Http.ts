import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { SessionCreated } from "./Model.ts"
import { Sessions, shownSession } from "./Sessions.ts"

export const SessionsHttpLive = HttpApiBuilder.group(CairnApi, "sessions", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) =>
        sessions
          .getOrCreate({ botId: payload.bot_id, clientId: payload.client_id, dispatchConfig: payload.dispatch_config })
          .pipe(Effect.map((session) => new SessionCreated({ session_id: session.id })))
      )
      .handle("messages", ({ path }) => sessions.messages(path.id))
      .handle("legacyList", ({ urlParams }) =>
        sessions
          .list({ botId: urlParams.bot_id, clientId: urlParams.client_id, limit: urlParams.limit })
          .pipe(Effect.map((list) => list.map(shownSession)))
      )
      .handle("legacyGet", ({ path }) => sessions.withMessages(path.id))
      .handle("legacyUpdate", ({ path, payload }) => Effect.map(sessions.setTitle(path.id, payload.title), shownSession))
      .handle("legacyDelete", ({ path }) => sessions.remove(path.id))
  })
)
