import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../../Api.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { ApiKeyList } from "./Model.ts"

export const ApiKeysHttpLive = HttpApiBuilder.group(CairnApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("create", ({ payload }) => keys.create(payload))
      .handle("list", () => Effect.map(keys.list, (views) => new ApiKeyList({ keys: views })))
      .handle("get", ({ path }) => keys.get(path.id))
      .handle("update", ({ path, payload }) => keys.update(path.id, payload))
      .handle("revoke", ({ path }) => keys.revoke(path.id))
  }))
