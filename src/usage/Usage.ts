/**
 * Usage of LLM calls. Records are queued in memory and written in batches every `flushMs` by a
 * background fiber, so recording adds nothing to a call's latency; a report writes what is queued
 * first, and shutdown writes the rest. The queue is bounded by `flushMs` of traffic.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { UsageReport, type UsageRecord } from "./Model.ts"
import { UsageRepo } from "./Repo.ts"
import { traced } from "../telemetry/Spans.ts"

export const flushMs = 500
const defaultRangeMs = 30 * 24 * 3600 * 1000

export class Usage extends Effect.Service<Usage>()("cairn/Usage", {
  scoped: Effect.gen(function* () {
    const repo = yield* UsageRepo
    let pending: Array<UsageRecord> = []
    const lock = yield* Effect.makeSemaphore(1)

    /** Writes everything queued so far; a failed batch goes back to the queue for the next try. */
    const flush = lock.withPermits(1)(
      Effect.suspend(() => {
        if (pending.length === 0) return Effect.void
        const batch = pending
        pending = []
        return repo.insertMany(batch).pipe(
          Effect.tapError(() =>
            Effect.sync(() => {
              pending = batch.concat(pending)
            })
          )
        )
      })
    )

    yield* flush.pipe(
      Effect.catchAllCause((cause) => Effect.logError("Writing LLM usage records failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(flushMs))),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      flush.pipe(Effect.catchAllCause((cause) => Effect.logError("Writing LLM usage records at shutdown failed", cause)))
    )

    const record = (entry: UsageRecord) =>
      Effect.sync(() => {
        pending.push(entry)
      })

    const report = (range: { readonly from?: Date; readonly to?: Date }) =>
      Effect.gen(function* () {
        yield* flush
        const to = range.to ?? new Date(yield* Clock.currentTimeMillis)
        const from = range.from ?? new Date(to.getTime() - defaultRangeMs)
        const [totals, byModel, byBot, byKey, byDay] = yield* Effect.all(
          [repo.totals(from, to), repo.byModel(from, to), repo.byBot(from, to), repo.byKey(from, to), repo.byDay(from, to)],
          { concurrency: 1 }
        )
        return new UsageReport({
          from: from.toISOString(),
          to: to.toISOString(),
          totals,
          by_model: byModel,
          by_bot: byBot,
          by_key: byKey,
          by_day: byDay
        })
      })

    return traced("Usage", { record, flush, report } as const)
  }),
  dependencies: [UsageRepo.Default]
}) {}
