import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../../Api.ts"
import { Principal } from "../../auth/Principal.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { ApiKeyList } from "./Model.ts"

export const ApiKeysHttpLive = HttpApiBuilder.group(CairnApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      // A signed-in user's key is theirs; one made with the static key (or another key) has no owner.
      .handle("create", ({ payload }) =>
        Effect.flatMap(Principal, (principal) => keys.create(payload, principal.kind === "user" ? principal.id : null)))
      .handle("list", () =>
        Effect.map(keys.list, (views) => new ApiKeyList({ keys: views })))
      .handle("get", ({ path }) => keys.get(path.id))
      .handle("update", ({ path, payload }) => keys.update(path.id, payload))
      .handle("revoke", ({ path }) => keys.revoke(path.id))
  }))
