/** Tasks: background agent work, its state and its result. */
import { Schema } from "effect"
import { body, limitParam, queryParams } from "../contract/Params.ts"
import { JsonObject } from "../sessions/Model.ts"

export const TaskStatus = Schema.Literal("pending", "running", "complete", "failed", "cancelled")

export class Task extends Schema.Class<Task>("Task")({
  id: Schema.UUID,
  status: TaskStatus,
  source: Schema.String,
  bot_id: Schema.String,
  session_id: Schema.UUID,
  channel_id: Schema.NullOr(Schema.UUID),
  prompt: Schema.String,
  result: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  client_actions: Schema.Array(Schema.Unknown),
  dispatch_type: Schema.String,
  dispatch_config: JsonObject,
  execution_config: JsonObject,
  attempts: Schema.Number,
  /** The run that answers it, once one started (rejoin it: `GET /api/v1/sessions/{id}/stream?run_id=`). */
  run_id: Schema.NullOr(Schema.UUID),
  /** none (dispatch_type none), pending, delivered or failed. */
  delivery_status: Schema.String,
  delivery_error: Schema.NullOr(Schema.String),
  delivery_attempts: Schema.Number,
  created_at: Schema.Date,
  started_at: Schema.NullOr(Schema.Date),
  completed_at: Schema.NullOr(Schema.Date)
}) {}

export interface NewTask {
  readonly source: string
  readonly botId: string
  readonly sessionId: string
  readonly channelId: string | null
  readonly clientId: string
  readonly prompt: string
  /** The prompt is already stored in the session (an injected message): the turn adds none. */
  readonly promptStored?: boolean
  /** Stored with the prompt (a queued chat message's images or voice). */
  readonly attachments?: ReadonlyArray<unknown>
  readonly modelOverride?: string | null
  readonly dispatchType?: string
  readonly dispatchConfig?: Record<string, unknown>
  readonly executionConfig?: Record<string, unknown>
  /** The inbound item (src/inbound) the task answers: its state follows the task's. */
  readonly inboundId?: string | null
}

/** The spec's execution_config: every field optional, applied to one task only. */
export const ExecutionConfig = Schema.Struct({
  system_preamble: Schema.optional(Schema.String),
  skills: Schema.optional(Schema.Array(Schema.String.pipe(Schema.minLength(1)))),
  tools: Schema.optional(Schema.Array(Schema.String.pipe(Schema.minLength(1)))),
  model_override: Schema.optional(Schema.String.pipe(Schema.minLength(1)))
})
export type ExecutionConfig = typeof ExecutionConfig.Type

export const InjectMessage = body({
  content: Schema.String,
  source: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1)), { default: () => "api" }),
  run_agent: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  notify: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  execution_config: Schema.optional(ExecutionConfig),
  /** Where the result goes when `notify` is true; default: the session's dispatch_config. */
  dispatch_type: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  dispatch_config: Schema.optional(JsonObject)
})
export type InjectMessage = typeof InjectMessage.Type

export class MessageInjected extends Schema.Class<MessageInjected>("MessageInjected")({
  message_id: Schema.UUID,
  session_id: Schema.UUID,
  task_id: Schema.NullOr(Schema.UUID)
}) {}

export const TaskListQuery = queryParams({
  status: Schema.optional(TaskStatus),
  session_id: Schema.optional(Schema.UUID),
  bot_id: Schema.optional(Schema.String),
  limit: limitParam()
})
