import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { SessionDocuments } from "./SessionDocuments.ts"

export const SessionDocumentsHttpLive = HttpApiBuilder.group(CairnApi, "sessionDocuments", (handlers) =>
  Effect.gen(function*() {
    const documents = yield* SessionDocuments
    return handlers
      .handle("add", ({ path, payload }) => Effect.flatMap(Principal, (principal) => documents.add(principal, path.id, payload)))
      .handle("list", ({ path }) => Effect.flatMap(Principal, (principal) => documents.list(principal, path.id)))
      .handle("remove", ({ path }) => Effect.flatMap(Principal, (principal) => documents.remove(principal, path.id, path.document_id)))
  }))
