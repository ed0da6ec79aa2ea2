import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { orInternal } from "../http/Internal.ts"
import { Documents } from "./Documents.ts"

export const DocumentsHttpLive = HttpApiBuilder.group(CairnApi, "documents", (handlers) =>
  Effect.gen(function* () {
    const documents = yield* Documents
    return handlers
      .handle("create", ({ payload }) => orInternal(documents.ingest(payload)))
      .handle("search", ({ urlParams }) => orInternal(documents.search(urlParams)))
      .handle("get", ({ path }) => orInternal(documents.get(path.id)))
      .handle("remove", ({ path }) => orInternal(documents.remove(path.id)))
  })
)
