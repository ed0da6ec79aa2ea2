import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { Todos } from "./Todos.ts"

export const TodosHttpLive = HttpApiBuilder.group(CairnApi, "todos", (handlers) =>
  Effect.gen(function*() {
    const todos = yield* Todos
    return handlers
      .handle("list", ({ urlParams }) =>
        todos.list({ botId: urlParams.bot_id, channelId: urlParams.channel_id, status: urlParams.status, limit: urlParams.limit }))
      .handle("get", ({ path }) =>
        todos.get(path.id))
      .handle("create", ({ payload }) =>
        Effect.flatMap(Principal, (principal) => todos.create(payload, principal)))
      .handle("update", ({ path, payload }) => todos.update(path.id, payload))
      .handle("complete", ({ path }) => todos.complete(path.id))
      .handle("delete", ({ path }) => todos.remove(path.id))
  }))
