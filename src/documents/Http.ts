import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Documents } from "./Documents.ts"

export const DocumentsHttpLive = HttpApiBuilder.group(CairnApi, "documents", (handlers) =>
  Effect.gen(function*() {
    const documents = yield* Documents
    return handlers
      .handle("create", ({ payload }) => documents.ingest(payload))
      .handle("list", ({ urlParams }) => documents.list(urlParams))
      .handle("search", ({ urlParams }) => documents.search(urlParams))
      .handle("get", ({ path }) => documents.get(path.id))
      .handle("remove", ({ path }) => documents.remove(path.id))
  }))
