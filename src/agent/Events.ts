/**
 * The events a run emits, declared once as a Schema: each is a struct discriminated by its `type`
 * field, with the fields it has on the SSE stream (`data: <json>`), in the order they are written.
 * The stream encodes through `AgentEvent`, the run log decodes through `StoredEvent`, `/openapi.json`
 * documents it, and a test holds the table in `docs/api.md` against it.
 *
 * Besides the spec's fields, companion clients get `tool` beside `name` on tool events,
 * `approval_id` beside `request_id` on approval events, and the full text so far in `text` on
 * `assistant_text` (with the new part in `delta`). The spec names `rag_rerank` without fields;
 * Cairn's are the query, the passages found and those kept, who ranked them and how long it took.
 * `tool_request` (a client-side tool) is Cairn's own.
 *
 * This file is part of the browser-safe contract: it imports only `effect`.
 */
import { Either, Schema } from "effect"
import { Origin } from "./Provenance.ts"

/** Why a tool call waits for a person: the bot's tool policy, or outside content in the turn's context. */
export const ApprovalReason = Schema.Literal("tool_policy", "untrusted_content")
export type ApprovalReason = typeof ApprovalReason.Type

/** One event type: a struct whose `type` is the literal, then its fields in wire order. */
const event = <const Type extends string, Fields extends Schema.Struct.Fields>(type: Type, description: string, fields: Fields) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields }).annotations({ title: type, description })

export const AssistantText = event("assistant_text", "Incremental model text: the answer so far and the new part", {
  text: Schema.String,
  delta: Schema.String
})
export const ThinkingContent = event("thinking_content", "Extended thinking: the reasoning so far and the new part", {
  text: Schema.String,
  delta: Schema.String
})
export const ToolStart = event("tool_start", "A tool call begins", {
  tool: Schema.String,
  name: Schema.String,
  args: Schema.Unknown,
  tool_call_id: Schema.String
})
export const ToolResult = event("tool_result", "A tool call completed", {
  tool: Schema.String,
  name: Schema.String,
  result: Schema.String,
  duration_ms: Schema.Number,
  tool_call_id: Schema.String,
  is_error: Schema.Boolean,
  /** The failure's message when the tool failed. */
  error: Schema.optional(Schema.String)
})
export const ToolRequest = event("tool_request", "A client-side tool call: answer it with POST /chat/tool_result", {
  request_id: Schema.String,
  tool: Schema.String,
  name: Schema.String,
  arguments: Schema.Unknown
})
export const ApprovalRequest = event("approval_request", "The run waits for a decision on a tool call", {
  request_id: Schema.String,
  approval_id: Schema.String,
  tool_name: Schema.String,
  tool: Schema.String,
  arguments: Schema.Unknown,
  /** Why it is asked: the bot's `tool_policies` (`tool_policy`), or outside content in the context (`untrusted_content`). */
  reason: Schema.optional(ApprovalReason),
  /** With `untrusted_content`: the outside sources in the context that caused it. */
  origins: Schema.optional(Schema.Array(Origin))
})
export const ApprovalResolved = event("approval_resolved", "The decision on a tool call was received", {
  request_id: Schema.String,
  approval_id: Schema.String,
  approved: Schema.Boolean,
  tool: Schema.String,
  verdict: Schema.Literal("approved", "denied")
})
export const DelegationPost = event("delegation_post", "The run delegated to another bot", {
  target_bot: Schema.String,
  /** The same bot, under the name the companion clients read. */
  bot_id: Schema.String
})
export const SecretWarning = event("secret_warning", "Secret-like patterns found in the input (their types, never the values)", {
  patterns: Schema.Array(Schema.Struct({ type: Schema.String }))
})
export const RateLimitWait = event("rate_limit_wait", "Waiting on a model provider's rate limit", {
  wait_seconds: Schema.Number
})
export const Fallback = event("fallback", "A fallback model took over", {
  original_model: Schema.String,
  fallback_model: Schema.String
})
export const ContextBudget = event("context_budget", "Context window use, in estimated tokens", {
  used: Schema.Number,
  limit: Schema.Number,
  /** Of `used`, what retrieved passages and notes take; 0 without retrieval (and in runs logged before it). */
  retrieval: Schema.optionalWith(Schema.Number, { default: () => 0 })
})

/**
 * What one source put into a turn's context: the spec's context-assembly events, "prefixed with a
 * source type, emitted for debugging", one per contributor of the plan and one for retrieval. Sent
 * only for a bot with `context_events` on; clients need none of them.
 */
const contextEvent = <const Source extends string>(source: Source) =>
  event(`context.${source}`, `What the ${source.replace("_", " ")} put into the turn's context (debugging)`, {
    tools: Schema.Array(Schema.String),
    skills: Schema.Array(Schema.String),
    /** The text it adds to the system prompt's preamble, in full ("" for none). */
    preamble: Schema.String
  })
export const ContextBot = contextEvent("bot")
export const ContextCarapaces = contextEvent("carapaces")
export const ContextExecutionConfig = contextEvent("execution_config")
export const ContextWorkspace = contextEvent("workspace")
export const ContextRetrieval = contextEvent("retrieval")
/** The sources of the context-assembly events (`context.<source>`). */
export type ContextSource = "bot" | "carapaces" | "execution_config" | "workspace" | "retrieval"

/** A passage retrieval found: its document, where it comes from, and its scores. */
const Passage = Schema.Struct({
  document_id: Schema.String,
  title: Schema.String,
  source: Schema.String,
  score: Schema.Number,
  similarity: Schema.NullOr(Schema.Number)
})

export const RagRerank = event("rag_rerank", "Retrieval before the model call: the passages found, and those kept for the context", {
  query: Schema.String,
  candidates: Schema.Array(Passage),
  kept: Schema.Array(Passage),
  /** `hybrid`: the vector and full-text fusion alone; `llm`: the model reordered and filtered it. */
  reranker: Schema.Literal("hybrid", "llm"),
  duration_ms: Schema.Number
})
export const Transcript = event("transcript", "What audio input said, once transcribed", {
  text: Schema.String
})
export const ErrorEvent = event("error", "The run (or its stream) failed; `response` follows", {
  message: Schema.String,
  /** Why, when a client may act on it: `budget_exceeded` (a spend cap refused the model call; retry after its period). */
  code: Schema.optional(Schema.String)
})
export const Cancelled = event("cancelled", "The run was cancelled; the stream ends", {})
export const Queued = event("queued", "The message was queued: the session is busy or the system paused", {
  session_id: Schema.String,
  task_id: Schema.String,
  reason: Schema.String
})
export const PassiveStored = event("passive_stored", "A passive message was stored; no run", {
  session_id: Schema.String
})
export const Response = event("response", "The run's answer, always last", {
  text: Schema.String,
  tools_used: Schema.Array(Schema.String),
  client_actions: Schema.Array(Schema.Unknown),
  session_id: Schema.String
})

/** The events stored as they are sent (the text events are stored as their delta only). */
const storedAsSent = [
  ToolStart,
  ToolResult,
  ToolRequest,
  ApprovalRequest,
  ApprovalResolved,
  DelegationPost,
  SecretWarning,
  RateLimitWait,
  Fallback,
  ContextBudget,
  ContextBot,
  ContextCarapaces,
  ContextExecutionConfig,
  ContextWorkspace,
  ContextRetrieval,
  RagRerank,
  Transcript,
  ErrorEvent,
  Cancelled,
  Queued,
  PassiveStored,
  Response
] as const

export const AgentEvent = Schema.Union(AssistantText, ThinkingContent, ...storedAsSent).annotations({
  description: "One Server-Sent Event's data: a JSON object discriminated by `type`"
})
export type AgentEvent = typeof AgentEvent.Type

export type AgentEventType = AgentEvent["type"]

/** A run's event with its place in the run: the SSE `id`. */
export interface SequencedEvent {
  readonly seq: number
  readonly event: AgentEvent
}

/** Events after which a run's stream ends. */
export const isTerminal = (event: AgentEvent) => event.type === "response" || event.type === "cancelled"

/**
 * What the run log stores. Streamed text events carry the full text so far; only the delta is
 * stored, and replay rebuilds the full text, so storage stays linear in the answer's length.
 */
export const StoredEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("assistant_text"), delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking_content"), delta: Schema.String }),
  ...storedAsSent
)
export type StoredEvent = typeof StoredEvent.Type

export const toStored = (event: AgentEvent): StoredEvent =>
  event.type === "assistant_text" || event.type === "thinking_content" ? { type: event.type, delta: event.delta } : event

// Compiled once: replay decodes every row of a run.
const decodeStored = Schema.decodeUnknownEither(StoredEvent)

/**
 * Rebuilds a run's events from its log. A row that does not decode (written by a version with
 * another event shape, or damaged) becomes an `error` event at its place instead of being skipped:
 * the client sees that a part of the run is missing, the sequence keeps no silent gap (its ids
 * still advance, so a rejoin resumes after it), and the replay goes on with the rows after it.
 */
export const fromStored = (stored: ReadonlyArray<{ readonly seq: number; readonly event: unknown }>): Array<SequencedEvent> => {
  let assistantText = ""
  let thinkingText = ""
  return stored.map(({ event: row, seq }): SequencedEvent => {
    const decoded = decodeStored(row)
    if (Either.isLeft(decoded)) {
      return { seq, event: { type: "error", message: `Event ${seq} of this run could not be read back from the run log` } }
    }
    const event = decoded.right
    switch (event.type) {
      case "assistant_text":
        assistantText += event.delta
        return { seq, event: { type: "assistant_text", text: assistantText, delta: event.delta } }
      case "thinking_content":
        thinkingText += event.delta
        return { seq, event: { type: "thinking_content", text: thinkingText, delta: event.delta } }
      // A new LLM iteration starts a new assistant text (the loop resets it on tool calls).
      case "tool_start":
      case "fallback":
        assistantText = ""
        return { seq, event }
      default:
        return { seq, event }
    }
  })
}
