/** The chat request and responses of `/chat` and `/chat/stream`, as the spec gives them. */
import { Schema } from "effect"
import { body, indexedText, limitParam, queryParams } from "../contract/Params.ts"
import { JsonObject } from "../sessions/Model.ts"
import { Base64, MessageAttachment } from "../sessions/Attachments.ts"

export const DispatchType = Schema.Literal("chatplatform", "webhook", "internal", "none")

export const ChatRequest = body({
  message: Schema.optionalWith(Schema.String, { default: () => "" }),
  channel_id: Schema.optional(Schema.UUID),
  /** Default `default`; named with an existing session_id of another bot, it moves the session there. */
  bot_id: Schema.optional(Schema.String),
  client_id: Schema.optionalWith(indexedText("client_id").pipe(Schema.minLength(1)), { default: () => "default" }),
  /** Companion clients address a session directly; an id the server has not seen is created. It wins over channel_id. */
  session_id: Schema.optional(Schema.UUID),
  /** Voice input: base64 of an audio file in `audio_format`, transcribed into the message. */
  audio_data: Schema.optional(Base64),
  audio_format: Schema.optional(Schema.Literal("m4a", "wav", "webm")),
  /**
   * Images for the model, or `{attachment_id}` references to uploads (see sessions/Attachments.ts);
   * their size and count are runtime settings.
   */
  attachments: Schema.optionalWith(Schema.Array(MessageAttachment), { default: () => [] }),
  dispatch_type: Schema.optional(DispatchType),
  dispatch_config: Schema.optional(JsonObject),
  model_override: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  passive: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type ChatRequest = typeof ChatRequest.Type

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
