import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal, type PrincipalShape } from "../auth/Principal.ts"
import { grants } from "../auth/Scopes.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Documents, type Visibility } from "./Documents.ts"

/** An admin sees every document through these routes; anyone else only those of no conversation. */
const visibility = (principal: PrincipalShape): Visibility => (grants(principal.scopes, "admin") ? "all" : "unscoped")

export const DocumentsHttpLive = HttpApiBuilder.group(CairnApi, "documents", (handlers) =>
  Effect.gen(function*() {
    const documents = yield* Documents
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) => documents.ingest(payload))
      .handle("list", ({ urlParams }) => Effect.flatMap(Principal, (principal) => documents.list(urlParams, visibility(principal))))
      .handle("search", ({ urlParams: { session_id, ...query } }) =>
        Effect.gen(function*() {
          const principal = yield* Principal
          // A conversation's documents: its owner's to search (or an admin's).
          if (session_id) yield* sessions.own(principal, session_id)
          const scope = session_id ? { session: session_id } : visibility(principal)
          return yield* documents.search({ ...query, scope })
        }))
      .handle("get", ({ path }) => Effect.flatMap(Principal, (principal) => documents.get(path.id, visibility(principal))))
      .handle("remove", ({ path }) => Effect.flatMap(Principal, (principal) => documents.remove(path.id, visibility(principal))))
  }))
