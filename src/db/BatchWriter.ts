/**
 * Records written off the request's path: `push` queues in memory, a background fiber writes what
 * is queued every `flushMs`, `flush` writes now (a report calls it before reading), and closing the
 * scope writes the rest. A failed batch goes back to the front of the queue for the next try. Used
 * for LLM usage and the agent's trace spans, which every call and turn adds to.
 */
import { Duration, Effect, Schedule, type Scope } from "effect"

export interface BatchWriter<A> {
  readonly push: (record: A) => Effect.Effect<void>
  readonly flush: Effect.Effect<void>
}

/** The cadence of the background writes. */
const flushCadence = (flushMs: number) => Schedule.spaced(Duration.millis(flushMs))

export const makeBatchWriter = <A, E>(
  what: string,
  write: (batch: ReadonlyArray<A>) => Effect.Effect<void, E>,
  flushMs: number
): Effect.Effect<BatchWriter<A>, never, Scope.Scope> =>
  Effect.gen(function* () {
    let pending: Array<A> = []
    const lock = yield* Effect.makeSemaphore(1)

    const flushOnce = lock.withPermits(1)(
      Effect.suspend(() => {
        if (pending.length === 0) return Effect.void
        const batch = pending
        pending = []
        return write(batch).pipe(
          // A defect too (repositories turn SQL failures into defects): the batch is kept either way.
          Effect.tapErrorCause(() =>
            Effect.sync(() => {
              pending = batch.concat(pending)
            })
          )
        )
      })
    )
    const flush = Effect.catchAllCause(flushOnce, (cause) => Effect.logError(`Writing ${what} failed`, cause))

    yield* flush.pipe(Effect.repeat(flushCadence(flushMs)), Effect.forkScoped)
    yield* Effect.addFinalizer(() => flush)

    const push = (record: A) =>
      Effect.sync(() => {
        pending.push(record)
      })
    return { push, flush }
  })
