/**
 * Keeps the ledger's items in step with their tasks: each task notice (claimed, finished, its
 * delivery recorded) and every few seconds without one, `Inbound.sync` moves the open items whose
 * tasks moved. One statement, idempotent, so every process may run it; a process that died between
 * a task's change and this leaves nothing behind (the next look reads the tasks as they are).
 */
import { Effect, Layer } from "effect"
import { Bus } from "../db/Bus.ts"
import { Inbound } from "./Inbound.ts"

const idleMs = 3_000
const spacingMs = 200

export const InboundSyncLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const bus = yield* Bus
    const inbound = yield* Inbound
    const look = inbound.sync.pipe(
      Effect.as(idleMs),
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("Inbound ledger sync failed", cause), idleMs))
    )
    yield* Effect.forkScoped(bus.lookLoop(["task", "tasks"], look, spacingMs))
  })
).pipe(Layer.provide(Layer.mergeAll(Inbound.Default, Bus.Default)))
