/** SQL for the usage records. */
import { SqlClient } from "@effect/sql"
import { Effect, type Schema } from "effect"
import * as crypto from "node:crypto"
import { jsonRowsInsert } from "../db/JsonRows.ts"
import { decodeRows, repository } from "../db/Repository.ts"
import { type UsageRecord, UsageReport, UsageTotals } from "./Model.ts"

const totalsColumns = `
  count(*)::int AS calls,
  (count(*) FILTER (WHERE outcome <> 'ok'))::int AS errors,
  coalesce(sum(prompt_tokens), 0)::int AS prompt_tokens,
  coalesce(sum(completion_tokens), 0)::int AS completion_tokens,
  coalesce(sum(total_tokens), 0)::int AS total_tokens,
  coalesce(sum(cache_read_tokens), 0)::int AS cache_read_tokens,
  coalesce(sum(cache_write_tokens), 0)::int AS cache_write_tokens,
  (count(*) FILTER (WHERE estimated))::int AS estimated_calls,
  coalesce(sum(cost_usd), 0)::float8 AS cost_usd,
  (count(*) FILTER (WHERE cost_usd IS NULL AND outcome = 'ok'))::int AS unpriced_calls,
  coalesce(sum(audio_seconds), 0)::float8 AS audio_seconds`

const insertUsage = jsonRowsInsert("llm_usage", [
  "id",
  "at",
  "source",
  "principal_kind",
  "principal_id",
  "bot_id",
  "session_id",
  "provider_id",
  "model",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "estimated",
  "audio_seconds",
  "cost_usd",
  "duration_ms",
  "outcome",
  "error_kind"
])

export class UsageRepo extends Effect.Service<UsageRepo>()("cairn/UsageRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Totals grouped by the first `keyCount` selected columns; rows decoded as the report declares them. */
    const grouped = <A, I>(row: Schema.Schema<A, I>, keys: string, keyCount: 1 | 2, from: Date, to: Date) =>
      sql
        .unsafe(
          `SELECT ${keys}, ${totalsColumns} FROM llm_usage WHERE at >= $1 AND at < $2
           GROUP BY ${keyCount === 1 ? "1" : "1, 2"} ORDER BY ${keyCount === 1 ? "1" : "1, 2"}`,
          [from, to]
        )
        .pipe(decodeRows(row))
    const report = UsageReport.fields

    return repository("UsageRepo", {
      insertMany: (records: ReadonlyArray<UsageRecord>) =>
        records.length === 0
          ? Effect.void
          : insertUsage(
            sql,
            records.map((r) => ({
              id: crypto.randomUUID(),
              at: r.at,
              source: r.source,
              principal_kind: r.principalKind,
              principal_id: r.principalId,
              bot_id: r.botId,
              session_id: r.sessionId,
              provider_id: r.providerId,
              model: r.model,
              prompt_tokens: r.promptTokens,
              completion_tokens: r.completionTokens,
              total_tokens: r.totalTokens,
              cache_read_tokens: r.cacheReadTokens ?? 0,
              cache_write_tokens: r.cacheWriteTokens ?? 0,
              estimated: r.estimated ?? false,
              audio_seconds: r.audioSeconds ?? 0,
              cost_usd: r.costUsd,
              duration_ms: r.durationMs,
              outcome: r.outcome,
              error_kind: r.errorKind
            }))
          ).pipe(Effect.asVoid),
      totals: (from: Date, to: Date) =>
        sql
          .unsafe(`SELECT ${totalsColumns} FROM llm_usage WHERE at >= $1 AND at < $2`, [from, to])
          .pipe(decodeRows(UsageTotals), Effect.map((rows) => rows[0]!)),
      byModel: (from: Date, to: Date) => grouped(report.by_model.value, "provider_id, model", 2, from, to),
      byBot: (from: Date, to: Date) => grouped(report.by_bot.value, "bot_id", 1, from, to),
      byKey: (from: Date, to: Date) => grouped(report.by_key.value, "principal_kind, principal_id", 2, from, to),
      byDay: (from: Date, to: Date) => grouped(report.by_day.value, `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`, 1, from, to)
    })
  })
}) {}
