import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Dispatchers } from "./delivery/Dispatchers.ts"
import { injectionOf, Injector } from "./Injection.ts"
import { MessageInjected } from "./Model.ts"
import { Tasks } from "./Tasks.ts"

export const InjectionHttpLive = HttpApiBuilder.group(CairnApi, "injection", (handlers) =>
  Effect.gen(function*() {
    const injector = yield* Injector
    const dispatchers = yield* Dispatchers
    const sessions = yield* Sessions
    return handlers.handle("inject", ({ path, payload }) =>
      Effect.gen(function*() {
        yield* sessions.reach(yield* Principal, path.id)
        yield* dispatchers.requireKnown(payload.dispatch_type)
        return new MessageInjected(yield* injector.inject(path.id, injectionOf(payload)))
      }))
  }))

export const TasksHttpLive = HttpApiBuilder.group(CairnApi, "tasks", (handlers) =>
  Effect.gen(function*() {
    const tasks = yield* Tasks
    return handlers
      .handle("list", ({ urlParams }) =>
        tasks.list({ status: urlParams.status, sessionId: urlParams.session_id, botId: urlParams.bot_id, limit: urlParams.limit }))
      .handle("get", ({ path }) =>
        tasks.get(path.id))
      .handle("adminGet", ({ path }) =>
        tasks.get(path.id))
      .handle("cancel", ({ path }) => tasks.cancel(path.id))
  }))
