import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { LogLevelControl } from "../telemetry/Logging.ts"
import { TraceNotFound } from "./Errors.ts"
import { Journal } from "./Journal.ts"
import {
  LogLevelBody,
  outcomeOfStatus,
  type SpanStatus,
  ToolCallLog,
  ToolCallPage,
  Trace,
  TraceSpan,
  TurnLog,
  TurnLogPage
} from "./Model.ts"
import { tailResponse } from "./TailStream.ts"

const defaultLimit = 50

const statusOfOutcome = Object.fromEntries(Object.entries(outcomeOfStatus).map(([status, outcome]) => [outcome, status])) as Record<
  (typeof outcomeOfStatus)[SpanStatus],
  SpanStatus
>

/** A page of `load`: one more row than asked tells whether a next page exists. */
const page = <A, R>(
  query: { readonly limit?: number | undefined; readonly offset?: number | undefined },
  load: (window: { readonly limit: number; readonly offset: number }) => Effect.Effect<ReadonlyArray<A>, never, R>
) => {
  const limit = query.limit ?? defaultLimit
  const offset = query.offset ?? 0
  return Effect.map(load({ limit: limit + 1, offset }), (rows) => ({
    items: rows.slice(0, limit),
    next_offset: rows.length > limit ? offset + limit : null
  }))
}

export const LogsHttpLive = HttpApiBuilder.group(CairnApi, "logs", (handlers) =>
  Effect.gen(function*() {
    const journal = yield* Journal
    const level = yield* LogLevelControl
    return handlers
      .handle("turns", ({ urlParams: q }) =>
        Effect.gen(function*() {
          const found = yield* page(q, (window) =>
            journal.turns({
              ...window,
              botId: q.bot_id,
              sessionId: q.session_id,
              status: q.outcome ? statusOfOutcome[q.outcome] : undefined,
              since: q.since,
              until: q.until
            }))
          return new TurnLogPage({
            next_offset: found.next_offset,
            items: found.items.map(
              (row) =>
                new TurnLog({
                  correlation_id: row.correlation_id,
                  bot_id: row.bot_id,
                  session_id: row.session_id,
                  model: row.model,
                  llm_calls: row.llm_calls,
                  prompt_tokens: row.prompt_tokens,
                  completion_tokens: row.completion_tokens,
                  total_tokens: row.total_tokens,
                  tools_used: row.tools_used,
                  duration_ms: row.duration_ms,
                  outcome: outcomeOfStatus[row.status],
                  error: row.error,
                  started_at: row.started_at.toISOString()
                })
            )
          })
        }))
      .handle("stream", ({ urlParams: q }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const lastEventId = request.headers["last-event-id"]
          return yield* tailResponse({ level: q.level, q: q.q, after: q.after ?? lastEventId, since: q.since })
        }))
      .handle("toolCalls", ({ urlParams: q }) =>
        Effect.gen(function*() {
          const found = yield* page(q, (window) =>
            journal.toolCalls({
              ...window,
              tool: q.tool,
              botId: q.bot_id,
              sessionId: q.session_id,
              correlationId: q.correlation_id,
              errorsOnly: q.errors === true,
              since: q.since,
              until: q.until
            }))
          return new ToolCallPage({
            next_offset: found.next_offset,
            items: found.items.map(
              (row) =>
                new ToolCallLog({
                  id: row.id,
                  correlation_id: row.correlation_id,
                  bot_id: row.bot_id,
                  session_id: row.session_id,
                  tool: row.name,
                  tool_call_id: typeof row.attributes.tool_call_id === "string" ? row.attributes.tool_call_id : null,
                  arguments: row.attributes.arguments ?? {},
                  result_chars: typeof row.attributes.result_chars === "number" ? row.attributes.result_chars : 0,
                  duration_ms: row.duration_ms,
                  error: row.error,
                  started_at: row.started_at.toISOString()
                })
            )
          })
        }))
      .handle("trace", ({ path }) =>
        Effect.gen(function*() {
          const spans = yield* journal.trace(path.correlation_id)
          if (spans.length === 0) return yield* new TraceNotFound({ detail: `Trace not found: ${path.correlation_id}` })
          const root = spans.find((span) => span.kind === "turn") ?? spans[0]!
          return new Trace({
            correlation_id: path.correlation_id,
            bot_id: root.bot_id,
            session_id: root.session_id,
            spans: spans.map((span) => new TraceSpan(span))
          })
        }))
      .handle("getLevel", () => Effect.map(level.get, (current) => new LogLevelBody({ level: current })))
      .handle("setLevel", ({ payload }) =>
        Effect.gen(function*() {
          yield* level.set(payload.level)
          // At info, under the new level: written only when the new level lets info through.
          yield* Effect.logInfo(`Log level set to ${payload.level} at runtime`)
          return new LogLevelBody({ level: payload.level })
        }))
  }))
