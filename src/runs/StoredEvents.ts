/**
 * A run's events read back from the log: a run of another process, or one no longer held in
 * memory. While it runs they are read again each time the bus says it wrote events or ended (or on
 * the bus's safety poll); a run whose process died ends its readers' stream as it would have.
 */
import { Chunk, Effect, Option, Stream } from "effect"
import { fromStored, isTerminal, type SequencedEvent } from "../agent/Events.ts"
import { Bus } from "../db/Bus.ts"
import { interruptedMessage, staleAfter } from "./Liveness.ts"
import { RunsRepo } from "./Repo.ts"

/** The events of a run after `after` from the log, then those it writes until it ends. */
export const storedEvents = Effect.gen(function*() {
  const repo = yield* RunsRepo
  const bus = yield* Bus

  const storedPages = (runId: string, after: number, wake: Effect.Effect<void>): Stream.Stream<SequencedEvent> =>
    Stream.paginateChunkEffect({ cursor: after, done: false }, (state) =>
      Effect.gen(function*() {
        if (state.done) return [Chunk.empty<SequencedEvent>(), Option.none()] as const
        const all = yield* repo.events(runId)
        const rebuilt = fromStored(all).filter((item) => item.seq > state.cursor)
        const ended = rebuilt.some((item) => isTerminal(item.event))
        if (ended) return [Chunk.fromIterable(rebuilt), Option.some({ cursor: state.cursor, done: true })] as const
        const status = Option.getOrUndefined(yield* repo.status(runId, staleAfter))
        if (status?.status !== "running" && rebuilt.length === 0) {
          return [Chunk.empty<SequencedEvent>(), Option.none()] as const
        }
        // The process running it died: end the stream as that run would have, not wait forever.
        if (status?.stale && rebuilt.length === 0) {
          const message = interruptedMessage
          return [
            Chunk.fromIterable<SequencedEvent>([
              { seq: state.cursor + 1, event: { type: "error", message } },
              { seq: state.cursor + 2, event: { type: "response", text: "", tools_used: [], client_actions: [], session_id: "" } }
            ]),
            Option.some({ cursor: state.cursor + 2, done: true })
          ] as const
        }
        if (rebuilt.length === 0) yield* wake
        const cursor = rebuilt.length > 0 ? rebuilt[rebuilt.length - 1]!.seq : state.cursor
        return [Chunk.fromIterable(rebuilt), Option.some({ cursor, done: false })] as const
      }))

  return (runId: string, after: number): Stream.Stream<SequencedEvent> =>
    Stream.unwrapScoped(Effect.map(bus.waker(["run_events", "run_end"], { key: runId }), (wake) => storedPages(runId, after, wake)))
})
