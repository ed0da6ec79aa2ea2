import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Dispatchers } from "./delivery/Dispatchers.ts"
import { ValidationError } from "../contract/Errors.ts"
import { Injector } from "./Injection.ts"
import { MessageInjected } from "./Model.ts"
import { Tasks } from "./Tasks.ts"

export const InjectionHttpLive = HttpApiBuilder.group(CairnApi, "injection", (handlers) =>
  Effect.gen(function* () {
    const injector = yield* Injector
    const dispatchers = yield* Dispatchers
    const sessions = yield* Sessions
    return handlers.handle("inject", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* sessions.reach(yield* Principal, path.id)
        if (payload.dispatch_type !== undefined && Option.isNone(dispatchers.get(payload.dispatch_type))) {
          return yield* ValidationError.single(
            ["body", "dispatch_type"],
            `Unknown dispatch_type: ${payload.dispatch_type} (registered: ${dispatchers.types().join(", ")})`
          )
        }
        const injected = yield* injector.inject(path.id, {
          content: payload.content,
          source: payload.source,
          runAgent: payload.run_agent,
          notify: payload.notify,
          executionConfig: payload.execution_config,
          dispatchType: payload.dispatch_type,
          dispatchConfig: payload.dispatch_config
        })
        return new MessageInjected(injected)
      })
    )
  })
)

export const TasksHttpLive = HttpApiBuilder.group(CairnApi, "tasks", (handlers) =>
  Effect.gen(function* () {
    const tasks = yield* Tasks
    return handlers
      .handle("list", ({ urlParams }) =>
        tasks.list({ status: urlParams.status, sessionId: urlParams.session_id, botId: urlParams.bot_id, limit: urlParams.limit })
      )
      .handle("get", ({ path }) => tasks.get(path.id))
      .handle("adminGet", ({ path }) => tasks.get(path.id))
      .handle("cancel", ({ path }) => tasks.cancel(path.id))
  })
)
