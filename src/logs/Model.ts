/** What the logs and traces routes answer: agent turns, the tool-call audit, a turn's spans, the log level. */
import { HttpApiSchema } from "@effect/platform"
import { JSONSchema, Schema } from "effect"
import { logLevels } from "../contract/LogLevels.ts"
import { limitParam, queryParams, storableDate } from "../contract/Params.ts"
import { TimestampText } from "../contract/Time.ts"

export const SpanKind = Schema.Literal("turn", "llm", "tool", "hook")
export type SpanKind = typeof SpanKind.Type

export const SpanStatus = Schema.Literal("ok", "error", "cancelled")
export type SpanStatus = typeof SpanStatus.Type

/** How a turn ended, as the logs name it. */
export const TurnOutcome = Schema.Literal("complete", "failed", "cancelled")
export const outcomeOfStatus = { ok: "complete", error: "failed", cancelled: "cancelled" } as const satisfies Record<
  SpanStatus,
  typeof TurnOutcome.Type
>

const Offset = Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 1_000_000)))
/** A date-time PostgreSQL can compare (years 1 to 9999). */
const Since = Schema.optional(
  Schema.DateFromString.pipe(
    Schema.validDate(),
    Schema.filter((date) => storableDate(date) || "Expected a date between the years 1 and 9999")
  )
)

export const TurnLogQuery = queryParams({
  bot_id: Schema.optional(Schema.String),
  session_id: Schema.optional(Schema.String),
  outcome: Schema.optional(TurnOutcome),
  since: Since,
  until: Since,
  limit: limitParam(),
  offset: Offset
})

export class TurnLog extends Schema.Class<TurnLog>("TurnLog")({
  correlation_id: Schema.String,
  bot_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  /** The model of the turn's last LLM call (null when none was made). */
  model: Schema.NullOr(Schema.String),
  llm_calls: Schema.Number,
  prompt_tokens: Schema.Number,
  completion_tokens: Schema.Number,
  total_tokens: Schema.Number,
  /** The tools the turn called, in order. */
  tools_used: Schema.Array(Schema.String),
  duration_ms: Schema.Number,
  outcome: TurnOutcome,
  error: Schema.NullOr(Schema.String),
  started_at: Schema.String
}) {}

export class TurnLogPage extends Schema.Class<TurnLogPage>("TurnLogPage")({
  items: Schema.Array(TurnLog),
  /** The offset of the next page; null on the last. */
  next_offset: Schema.NullOr(Schema.Number)
}) {}

export const ToolCallQuery = queryParams({
  tool: Schema.optional(Schema.String),
  bot_id: Schema.optional(Schema.String),
  session_id: Schema.optional(Schema.String),
  correlation_id: Schema.optional(Schema.String),
  /** `true`: only the calls that failed. */
  errors: Schema.optional(Schema.BooleanFromString),
  since: Since,
  until: Since,
  limit: limitParam(),
  offset: Offset
})

export class ToolCallLog extends Schema.Class<ToolCallLog>("ToolCallLog")({
  id: Schema.String,
  correlation_id: Schema.String,
  bot_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  tool: Schema.String,
  tool_call_id: Schema.NullOr(Schema.String),
  /** As the model sent them, with credential-like values masked. */
  arguments: Schema.Unknown,
  result_chars: Schema.Number,
  duration_ms: Schema.Number,
  error: Schema.NullOr(Schema.String),
  started_at: Schema.String
}) {}

export class ToolCallPage extends Schema.Class<ToolCallPage>("ToolCallPage")({
  items: Schema.Array(ToolCallLog),
  next_offset: Schema.NullOr(Schema.Number)
}) {}

export class TraceSpan extends Schema.Class<TraceSpan>("TraceSpan")({
  id: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  kind: SpanKind,
  name: Schema.String,
  started_at: TimestampText,
  duration_ms: Schema.Number,
  status: SpanStatus,
  error: Schema.NullOr(Schema.String),
  attributes: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}) {}

export class Trace extends Schema.Class<Trace>("Trace")({
  correlation_id: Schema.String,
  bot_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  /** Every span of the turn, in the order they started; `parent_id` nests them. */
  spans: Schema.Array(TraceSpan)
}) {}

export const LogLevelName = Schema.Literal(...logLevels)

export class LogLevelBody extends Schema.Class<LogLevelBody>("LogLevelBody")(
  { level: LogLevelName },
  [undefined, undefined, { parseOptions: { errors: "all", onExcessProperty: "error" } }]
) {}

/** A level a line is written at (`none` is only a running level). */
export const LineLevel = Schema.Literal("trace", "debug", "info", "warning", "error", "fatal")

export const LogTailQuery = queryParams({
  /** The least severe level shown (default: every line the server writes at its running level). */
  level: Schema.optional(LineLevel),
  /** Only lines whose message, annotations or cause contain this text (case-insensitive). */
  q: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  /** Replay the kept lines after this id first (as the Last-Event-ID header does). */
  after: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  /** Replay the kept lines written at or after this time first. */
  since: Since
})

/** One log line of the live tail, masked. */
export const LogTailLine = Schema.Struct({
  type: Schema.Literal("line"),
  /** `<process start>-<number>`: the SSE id a reconnecting reader sends back. */
  id: Schema.String,
  timestamp: Schema.String,
  level: LineLevel,
  message: Schema.String,
  annotations: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** Log spans open around the line: label to milliseconds so far. */
  spans: Schema.Record({ key: Schema.String, value: Schema.Number }),
  fiber: Schema.String,
  /** The trace span the line was written in, if any. */
  trace: Schema.NullOr(Schema.Struct({ span: Schema.String, trace_id: Schema.String, span_id: Schema.String })),
  cause: Schema.NullOr(Schema.String)
})

/**
 * Lines that matched but were not sent: `slow_reader` when the reader fell too far behind (its
 * queue is bounded), `replay` when a reconnect asked for lines older than the kept ones.
 */
export const LogLinesSkipped = Schema.Struct({
  type: Schema.Literal("skipped"),
  count: Schema.Number,
  reason: Schema.Literal("slow_reader", "replay")
})

export const LogTailEvent = Schema.Union(LogTailLine, LogLinesSkipped)
export type LogTailEvent = typeof LogTailEvent.Type

export const LogTailStream = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description: "Server-Sent Events: `id: <line id>` and `data: <json with type>` (`line` or `skipped`) per event, " +
    "a `: keepalive` comment every 15 s. Each event's JSON is described by `x-event-schema`.",
  jsonSchema: { "x-event-schema": JSONSchema.fromAST(LogTailEvent.ast, { definitions: {}, target: "openApi3.1" }) }
})
