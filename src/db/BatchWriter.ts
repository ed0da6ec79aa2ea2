/**
 * Records written off the request's path: `push` queues in memory, a background fiber writes what
 * is queued `flushMs` after the first push (db/WriteBehind.ts: no clock while nothing is queued),
 * `flush` writes now (a report calls it before reading), and closing the scope writes the rest.
 * Used for LLM usage and the agent's trace spans, which every call and turn adds to. Writes go in
 * chunks (a statement's parameters are bounded). A chunk that fails is tried record by record:
 * records that still fail are dropped (one bad record must not hold back the rest forever); when
 * none goes in, the database is taken to be away and the chunk waits for the next flush. The queue
 * holds at most `maxQueued` records; past that the oldest are dropped.
 */
import { Cause, Duration, Effect, type Scope } from "effect"
import { writeBehind } from "./WriteBehind.ts"

export interface BatchWriter<A> {
  readonly push: (record: A) => Effect.Effect<void>
  readonly flush: Effect.Effect<void>
}

/** Records per statement: well under PostgreSQL's 65,535 parameters at a dozen columns. */
const chunkSize = 500
const maxQueued = 100_000

export const makeBatchWriter = <A, E>(
  what: string,
  write: (batch: ReadonlyArray<A>) => Effect.Effect<void, E>,
  flushMs: number
): Effect.Effect<BatchWriter<A>, never, Scope.Scope> =>
  Effect.gen(function*() {
    let pending: Array<A> = []
    const lock = yield* Effect.makeSemaphore(1)
    // Its exit holds a defect too (repositories turn SQL failures into defects).
    const attempt = (records: ReadonlyArray<A>) => Effect.exit(write(records))

    /** Writes one chunk; answers the records to try again at the next flush. */
    const writeChunk = (chunk: ReadonlyArray<A>) =>
      Effect.gen(function*() {
        const whole = yield* attempt(chunk)
        if (whole._tag === "Success") return []
        let failed = 0
        for (const record of chunk) if ((yield* attempt([record]))._tag === "Failure") failed++
        if (failed === chunk.length) return [...chunk]
        yield* Effect.logWarning(`Dropped ${failed} ${what} the database refused`, Cause.squash(whole.cause))
        return []
      })

    const flushOnce = lock.withPermits(1)(
      Effect.gen(function*() {
        if (pending.length === 0) return
        const batch = pending
        pending = []
        const retry: Array<A> = []
        for (let i = 0; i < batch.length; i += chunkSize) retry.push(...(yield* writeChunk(batch.slice(i, i + chunkSize))))
        if (retry.length > 0) {
          pending = retry.concat(pending)
          yield* Effect.logWarning(`Writing ${what} failed; ${retry.length} kept for the next try`)
        }
      })
    )
    const flush = Effect.catchAllCause(flushOnce, (cause) => Effect.logError(`Writing ${what} failed`, cause))

    // Again after `flushMs` while records are kept for the next try.
    const background = yield* writeBehind(Duration.millis(flushMs), Effect.zipRight(flush, Effect.sync(() => pending.length > 0)))
    yield* Effect.addFinalizer(() => flush)

    let dropped = 0
    const push = (record: A) =>
      Effect.suspend(() => {
        pending.push(record)
        background.wake()
        if (pending.length <= maxQueued) return Effect.void
        pending.splice(0, pending.length - maxQueued)
        // Said once per thousand, so a long outage does not flood the log.
        return ++dropped % 1000 === 1 ? Effect.logWarning(`The ${what} queue is full (${maxQueued}); the oldest are dropped`) : Effect.void
      })
    return { push, flush }
  })
