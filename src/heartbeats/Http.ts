import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Heartbeats } from "./Heartbeats.ts"

export const HeartbeatsHttpLive = HttpApiBuilder.group(CairnApi, "heartbeats", (handlers) =>
  Effect.gen(function*() {
    const heartbeats = yield* Heartbeats
    return handlers
      .handle("get", ({ path }) => heartbeats.get(path.id))
      .handle("put", ({ path, payload }) => heartbeats.put(path.id, payload))
      .handle("runs", ({ path, urlParams }) => heartbeats.runs(path.id, urlParams.limit ?? 50))
      .handle("runNow", ({ path }) => heartbeats.runNow(path.id))
  }))
