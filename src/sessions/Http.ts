import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { confinedBot } from "./Access.ts"
import { SessionCreated, SessionFamily, SessionSearchResults } from "./Model.ts"
import { Sessions, shownSession } from "./Sessions.ts"

export const SessionsHttpLive = HttpApiBuilder.group(CairnApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(Principal, (principal) =>
          sessions.getOrCreate({
            botId: payload.bot_id ?? confinedBot(principal) ?? "default",
            clientId: payload.client_id,
            dispatchConfig: payload.dispatch_config,
            principal
          })).pipe(Effect.map((session) => new SessionCreated({ session_id: session.id }))))
      .handle("search", ({ urlParams }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(sessions.search(principal, urlParams.q, urlParams.limit ?? 20), (results) =>
            new SessionSearchResults({ results }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(sessions.update(principal, path.id, payload), shownSession)))
      .handle("fork", ({ path, payload }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(sessions.fork(principal, path.id, payload.message_id), shownSession)))
      .handle("family", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(sessions.family(principal, path.id), (branches) =>
            new SessionFamily({ branches }))))
      .handle("export", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          sessions.exportOf(principal, path.id)))
      .handle("import", ({ payload }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(
            sessions.importFrom(principal, payload.bot_id ?? confinedBot(principal) ?? "default", payload.client_id, payload.export),
            shownSession
          )))
      .handle("messages", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          sessions.messages(principal, path.id)))
      .handle("legacyList", ({ urlParams }) =>
        Effect.flatMap(Principal, (principal) =>
          sessions.list(principal, {
            botId: urlParams.bot_id,
            clientId: urlParams.client_id,
            limit: urlParams.limit,
            archived: urlParams.archived,
            mine: urlParams.mine
          })).pipe(
            Effect.map((list) =>
              list.map(shownSession)
            )
          ))
      .handle("legacyGet", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          sessions.withMessages(principal, path.id)))
      .handle("legacyUpdate", ({ path, payload }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(sessions.setTitle(principal, path.id, payload.title), shownSession)))
      .handle("legacyDelete", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          sessions.remove(principal, path.id)))
  }))
