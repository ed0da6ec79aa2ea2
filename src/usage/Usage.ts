/**
 * Usage of LLM calls. Records are written in batches every `flushMs` (db/BatchWriter.ts), so
 * recording adds nothing to a call's latency; a report writes what is queued first.
 */
import { Clock, Effect } from "effect"
import { makeBatchWriter } from "../db/BatchWriter.ts"
import { providerCall } from "../telemetry/Metrics.ts"
import { traced } from "../telemetry/Spans.ts"
import { type UsageRecord, UsageReport } from "./Model.ts"
import { UsageRepo } from "./Repo.ts"

export const flushMs = 500
const defaultRangeMs = 30 * 24 * 3600 * 1000

export class Usage extends Effect.Service<Usage>()("cairn/Usage", {
  scoped: Effect.gen(function*() {
    const repo = yield* UsageRepo
    const writer = yield* makeBatchWriter("LLM usage records", repo.insertMany, flushMs)
    const { flush } = writer
    // Every provider call is recorded here, so it is counted here too (telemetry/Metrics.ts).
    const record = (entry: UsageRecord) =>
      Effect.zipRight(providerCall(entry.providerId, entry.outcome === "ok", entry.durationMs), writer.push(entry))

    const report = (range: { readonly from?: Date; readonly to?: Date }) =>
      Effect.gen(function*() {
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
