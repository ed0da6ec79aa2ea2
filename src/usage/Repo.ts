/** SQL for the usage records. */
import { repository } from "../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import type { UsageRecord, UsageTotals } from "./Model.ts"

const totalsColumns = `
  count(*)::int AS calls,
  (count(*) FILTER (WHERE outcome <> 'ok'))::int AS errors,
  coalesce(sum(prompt_tokens), 0)::int AS prompt_tokens,
  coalesce(sum(completion_tokens), 0)::int AS completion_tokens,
  coalesce(sum(total_tokens), 0)::int AS total_tokens,
  coalesce(sum(cost_usd), 0)::float8 AS cost_usd,
  (count(*) FILTER (WHERE cost_usd IS NULL AND outcome = 'ok'))::int AS unpriced_calls`

export class UsageRepo extends Effect.Service<UsageRepo>()("cairn/UsageRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Totals grouped by the first `keyCount` selected columns. */
    const grouped = <Row>(keys: string, keyCount: 1 | 2, from: Date, to: Date) =>
      sql.unsafe<Row & UsageTotals>(
        `SELECT ${keys}, ${totalsColumns} FROM llm_usage WHERE at >= $1 AND at < $2
         GROUP BY ${keyCount === 1 ? "1" : "1, 2"} ORDER BY ${keyCount === 1 ? "1" : "1, 2"}`,
        [from, to]
      )

    return repository("UsageRepo", {
      insertMany: (records: ReadonlyArray<UsageRecord>) =>
        records.length === 0
          ? Effect.void
          : sql`INSERT INTO llm_usage ${sql.insert(
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
                cost_usd: r.costUsd,
                duration_ms: r.durationMs,
                outcome: r.outcome,
                error_kind: r.errorKind
              }))
            )}`.pipe(Effect.asVoid),
      totals: (from: Date, to: Date) =>
        sql
          .unsafe<UsageTotals>(`SELECT ${totalsColumns} FROM llm_usage WHERE at >= $1 AND at < $2`, [from, to])
          .pipe(Effect.map((rows) => rows[0]!)),
      byModel: (from: Date, to: Date) => grouped<{ provider_id: string; model: string }>("provider_id, model", 2, from, to),
      byBot: (from: Date, to: Date) => grouped<{ bot_id: string | null }>("bot_id", 1, from, to),
      byKey: (from: Date, to: Date) =>
        grouped<{ principal_kind: string | null; principal_id: string | null }>("principal_kind, principal_id", 2, from, to),
      byDay: (from: Date, to: Date) =>
        grouped<{ day: string }>(`to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`, 1, from, to)
    })
  })
}) {}
