/** SQL for the trace spans: written in batches, read as turn logs, the tool-call audit and traces. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { jsonRowsInsert } from "../db/JsonRows.ts"
import { decodeRows, repository } from "../db/Repository.ts"
import { type SpanKind, type SpanStatus, Trace, TraceSpan } from "./Model.ts"

export interface SpanRecord {
  readonly id: string
  readonly correlationId: string
  readonly parentId: string | null
  readonly kind: SpanKind
  readonly name: string
  readonly botId: string | null
  readonly sessionId: string | null
  readonly startedAt: Date
  readonly durationMs: number
  readonly status: SpanStatus
  readonly error: string | null
  readonly attributes: Record<string, unknown>
}

/**
 * A span as stored: the API's `TraceSpan` as the driver hands it over (its type side: timestamps as
 * `Date`) with its trace's correlation id, bot and session.
 */
export const SpanRow = Schema.typeSchema(Schema.Struct({ ...TraceSpan.fields, ...Trace.fields }).pipe(Schema.omit("spans")))

/** A turn span with its LLM calls and tool calls folded in. */
export const TurnRow = SpanRow.pipe(
  Schema.extend(
    Schema.Struct({
      llm_calls: Schema.NumberFromString,
      prompt_tokens: Schema.NumberFromString,
      completion_tokens: Schema.NumberFromString,
      total_tokens: Schema.NumberFromString,
      model: Schema.NullOr(Schema.String),
      tools_used: Schema.Array(Schema.String)
    })
  )
)

export interface Window {
  readonly botId?: string | undefined
  readonly sessionId?: string | undefined
  readonly since?: Date | undefined
  readonly until?: Date | undefined
  readonly limit: number
  readonly offset: number
}

const spanColumnNames = [
  "id",
  "correlation_id",
  "parent_id",
  "kind",
  "name",
  "bot_id",
  "session_id",
  "started_at",
  "duration_ms",
  "status",
  "error",
  "attributes"
] as const
const columns = spanColumnNames.join(", ")
const spanColumns = (alias: string) => spanColumnNames.map((c) => `${alias}.${c}`).join(", ")

const insertSpans = jsonRowsInsert("trace_spans", spanColumnNames, " ON CONFLICT (id) DO NOTHING")

export class LogsRepo extends Effect.Service<LogsRepo>()("cairn/LogsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const spans = decodeRows(SpanRow)
    const turns = decodeRows(TurnRow)
    /** The filters every listing shares, on the span alias `s`. */
    const windowed = (w: Window) =>
      sql`
      (${w.botId ?? null}::text IS NULL OR s.bot_id = ${w.botId ?? null})
      AND (${w.sessionId ?? null}::text IS NULL OR s.session_id = ${w.sessionId ?? null})
      AND (${w.since ?? null}::timestamptz IS NULL OR s.started_at >= ${w.since ?? null})
      AND (${w.until ?? null}::timestamptz IS NULL OR s.started_at < ${w.until ?? null})`
    return repository("LogsRepo", {
      insertMany: (records: ReadonlyArray<SpanRecord>) =>
        records.length === 0
          ? Effect.void
          : insertSpans(
            sql,
            records.map((r) => ({
              id: r.id,
              correlation_id: r.correlationId,
              parent_id: r.parentId,
              kind: r.kind,
              name: r.name,
              bot_id: r.botId,
              session_id: r.sessionId,
              started_at: r.startedAt,
              duration_ms: Math.round(r.durationMs),
              status: r.status,
              error: r.error ?? null,
              attributes: r.attributes
            }))
          ).pipe(Effect.asVoid),
      /** Turns, newest first, each with the tokens of its LLM calls and the names of its tools. */
      turns: (w: Window & { readonly status?: SpanStatus | undefined }) =>
        turns(sql`SELECT ${sql.literal(spanColumns("s"))},
                    coalesce(l.calls, 0)::text AS llm_calls,
                    coalesce(l.prompt, 0)::text AS prompt_tokens,
                    coalesce(l.completion, 0)::text AS completion_tokens,
                    coalesce(l.total, 0)::text AS total_tokens,
                    l.model,
                    coalesce(t.tools, '[]'::jsonb) AS tools_used
                  FROM trace_spans s
                  LEFT JOIN LATERAL (
                    SELECT count(*) AS calls,
                           sum(coalesce((c.attributes->>'prompt_tokens')::int, 0)) AS prompt,
                           sum(coalesce((c.attributes->>'completion_tokens')::int, 0)) AS completion,
                           sum(coalesce((c.attributes->>'total_tokens')::int, 0)) AS total,
                           (array_agg(c.attributes->>'model' ORDER BY c.started_at DESC))[1] AS model
                    FROM trace_spans c WHERE c.correlation_id = s.correlation_id AND c.kind = 'llm') l ON true
                  LEFT JOIN LATERAL (
                    SELECT jsonb_agg(c.name ORDER BY c.started_at) AS tools
                    FROM trace_spans c WHERE c.correlation_id = s.correlation_id AND c.kind = 'tool') t ON true
                  WHERE s.kind = 'turn' AND ${windowed(w)}
                    AND (${w.status ?? null}::text IS NULL OR s.status = ${w.status ?? null})
                  ORDER BY s.started_at DESC, s.id LIMIT ${w.limit} OFFSET ${w.offset}`),
      /** Tool spans, newest first. */
      toolCalls: (
        w: Window & { readonly tool?: string | undefined; readonly correlationId?: string | undefined; readonly errorsOnly: boolean }
      ) =>
        spans(sql`SELECT ${sql.literal(spanColumns("s"))} FROM trace_spans s
                  WHERE s.kind = 'tool' AND ${windowed(w)}
                    AND (${w.tool ?? null}::text IS NULL OR s.name = ${w.tool ?? null})
                    AND (${w.correlationId ?? null}::text IS NULL OR s.correlation_id = ${w.correlationId ?? null})
                    AND (NOT ${w.errorsOnly} OR s.status = 'error')
                  ORDER BY s.started_at DESC, s.id LIMIT ${w.limit} OFFSET ${w.offset}`),
      /** Every span of one turn, in the order they started. */
      trace: (correlationId: string) =>
        spans(
          sql`SELECT ${sql.literal(columns)} FROM trace_spans WHERE correlation_id = ${correlationId} ORDER BY started_at, kind <> 'turn'`
        ),
      /** Drops spans older than `before`; answers how many went. */
      prune: (before: Date) => Effect.map(sql`DELETE FROM trace_spans WHERE started_at < ${before} RETURNING id`, (rows) => rows.length)
    })
  })
}) {}
