import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Bindings } from "./Bindings.ts"
import { BindingList } from "./Model.ts"

export const BindingsHttpLive = HttpApiBuilder.group(CairnApi, "bindings", (handlers) =>
  Effect.gen(function*() {
    const bindings = yield* Bindings
    return handlers
      .handle("list", ({ path }) =>
        bindings.forChannel(path.id).pipe(
          Effect.map((list) => new BindingList({ bindings: list }))
        ))
      .handle("create", ({ path, payload }) => bindings.create(path.id, payload))
      .handle("update", ({ path, payload }) => bindings.update(path.id, path.binding_id, payload))
      .handle("delete", ({ path }) => bindings.remove(path.id, path.binding_id))
  }))
