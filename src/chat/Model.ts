/** The chat request and responses of `/chat` and `/chat/stream`, as the spec gives them. */
import { Schema } from "effect"
import { ApprovalReason } from "../agent/Events.ts"
import { Origin } from "../agent/Provenance.ts"
import { body, limitParam, queryParams } from "../contract/Params.ts"

// A message's request is the intake's, whatever surface sends it; /chat and /chat/stream take it as it is.
export { ChatRequest, DispatchType } from "../intake/Model.ts"

export class ChatResponse extends Schema.Class<ChatResponse>("ChatResponse")({
  session_id: Schema.UUID,
  response: Schema.String,
  transcript: Schema.String,
  client_actions: Schema.Array(Schema.Unknown)
}) {}

export const CancelRequest = body({
  client_id: Schema.optionalWith(Schema.String, { default: () => "default" }),
  /** Default `default` (a widget token's own bot). */
  bot_id: Schema.optional(Schema.String),
  session_id: Schema.optional(Schema.UUID)
})

export class CancelResponse extends Schema.Class<CancelResponse>("CancelResponse")({
  cancelled: Schema.Boolean,
  queued_tasks_cancelled: Schema.Number
}) {}

export const ToolResultRequest = body({
  request_id: Schema.String,
  result: Schema.Union(Schema.String, Schema.Unknown)
})

export class Acknowledged extends Schema.Class<Acknowledged>("Acknowledged")({ ok: Schema.Boolean }) {}

export const DecideRequest = body({ approved: Schema.Boolean })

export class ApprovalDecision extends Schema.Class<ApprovalDecision>("ApprovalDecision")({
  approval_id: Schema.String,
  approved: Schema.Boolean
}) {}

export const ApprovalQuery = queryParams({
  status: Schema.optional(Schema.Literal("pending", "approved", "denied", "expired")),
  session_id: Schema.optional(Schema.UUID),
  limit: limitParam()
})

/** A tool call that waited (or waits) for a person's decision. */
export class ApprovalView extends Schema.Class<ApprovalView>("ApprovalView")({
  approval_id: Schema.String,
  run_id: Schema.String,
  session_id: Schema.String,
  tool: Schema.String,
  /** The call's arguments, credential-like values masked. */
  arguments: Schema.Unknown,
  status: Schema.Literal("pending", "approved", "denied", "expired"),
  /** Why it was asked: the bot's tool policy, or outside content in the run's context (docs/security.md). */
  reason: ApprovalReason,
  /** With `untrusted_content`: the outside sources that caused it. */
  origins: Schema.Array(Origin),
  created_at: Schema.String,
  decided_at: Schema.NullOr(Schema.String)
}) {}

/** One of a session's stored summaries: what it says, the messages it covers, and what made it. */
export class SummaryVersion extends Schema.Class<SummaryVersion>("SummaryVersion")({
  version: Schema.Number,
  summary: Schema.String,
  from_seq: Schema.Number,
  through_seq: Schema.Number,
  /** `summarize` (the companion route), `compaction` (a turn past its threshold) or `admin`. */
  trigger: Schema.String,
  created_at: Schema.Date
}) {}

/** `POST /sessions/{id}/summarize`: what the model wrote; the summary is stored with the session. */
export class SessionSummary extends Schema.Class<SessionSummary>("SessionSummary")({
  title: Schema.String,
  summary: Schema.String
}) {}
