import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { RunNotFound } from "./Errors.ts"
import { Runs } from "./Runs.ts"
import * as Sse from "./Sse.ts"

export const RunsHttpLive = HttpApiBuilder.group(CairnApi, "runs", (handlers) =>
  Effect.gen(function*() {
    const runs = yield* Runs
    const sessions = yield* Sessions
    return handlers.handle("rejoin", ({ path, urlParams }) =>
      Effect.gen(function*() {
        const session = yield* sessions.reach(yield* Principal, path.id)
        const request = yield* HttpServerRequest.HttpServerRequest
        const lastEventId = Number(request.headers["last-event-id"])
        const after = urlParams.after ?? (Number.isInteger(lastEventId) && lastEventId >= 0 ? lastEventId : 0)
        let runId: string
        if (urlParams.run_id) {
          if (!(yield* runs.runExists(urlParams.run_id, session.id))) {
            return yield* new RunNotFound({ detail: `Run not found in this session: ${urlParams.run_id}` })
          }
          runId = urlParams.run_id
        } else {
          const latest = yield* runs.latestRun(session.id)
          if (Option.isNone(latest)) return yield* new RunNotFound({ detail: "This session has no run yet" })
          runId = latest.value
        }
        return yield* Sse.response(runs.follow(runId, after), session.id)
      }))
  }))
