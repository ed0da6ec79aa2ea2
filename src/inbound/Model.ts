/**
 * The inbound ledger's item: one thing that came in (a bridge message, a mail, an integration's
 * webhook delivery, a result delivery the dispatcher retried), under its source's own id, and the
 * state it is in. `dead` items are the dead-letter queue.
 */
import { Schema } from "effect"
import { idPath, limitParam, queryParams } from "../contract/Params.ts"
import { Timestamp } from "../contract/Time.ts"

/**
 * received -> ignored | passive | queued -> run -> delivered | failed -> dead; a dead letter a
 * person discards is `discarded` (kept, so its source id is never acted on again).
 */
export const InboundState = Schema.Literal(
  "received",
  "ignored",
  "passive",
  "queued",
  "run",
  "delivered",
  "failed",
  "dead",
  "discarded"
)
export type InboundState = typeof InboundState.Type

/** The states an item settles in by its source's own decision (no task answers it). */
export const SettledState = Schema.Literal("ignored", "passive", "delivered")
export type SettledState = typeof SettledState.Type

export class InboundItem extends Schema.Class<InboundItem>("InboundItem")({
  id: Schema.UUID,
  /** The integration's id (msgbridge, mailbox, github ...), or `dispatch` for a result delivery. */
  source: Schema.String,
  /** The source's own id: a message GUID, a Message-ID, a delivery id, a task id. */
  external_id: Schema.String,
  integration: Schema.NullOr(Schema.String),
  channel_id: Schema.NullOr(Schema.UUID),
  state: InboundState,
  /** Why it is in its state (ignored: unbound, echo ...; dead: what gave up). */
  reason: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  /** One line a person recognises it by (the start of the text, a subject). */
  summary: Schema.String,
  /** The tasks that answer it (none for an item its source settled itself). */
  task_ids: Schema.Array(Schema.UUID),
  received_at: Timestamp,
  updated_at: Timestamp
}) {}

export const DeadLetterQuery = queryParams({
  source: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  integration: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  channel_id: Schema.optional(Schema.UUID),
  limit: limitParam()
})

export class DeadLetters extends Schema.Class<DeadLetters>("DeadLetters")({
  items: Schema.Array(InboundItem),
  /** Dead letters per source (all of them, whatever the filter). */
  counts: Schema.Record({ key: Schema.String, value: Schema.Number })
}) {}

export const deadLetterPath = idPath("Dead letter")
