/** Rows of a session's transcript and summaries as read, and the title a session takes from its first message. */
import { Option, Schema } from "effect"
import { Message } from "./Model.ts"

export const TranscriptRow = Schema.Struct({
  seq: Schema.Number,
  role: Message.fields.role,
  content: Schema.NullOr(Schema.String),
  passive: Schema.Boolean,
  tool_name: Schema.NullOr(Schema.String)
})

/** One stored summary of a session. */
export const SummaryRow = Schema.Struct({
  version: Schema.Number,
  summary: Schema.String,
  from_seq: Schema.Number,
  through_seq: Schema.Number,
  trigger: Schema.String,
  created_at: Schema.DateFromSelf
})
export type SummaryRow = typeof SummaryRow.Type

/**
 * A title from the first exchange: the first message a user typed (its first 80 characters,
 * whitespace folded, cut at a word). An instruction the server injected (a heartbeat's, a
 * webhook's) is no one's words: a conversation that starts with one takes its title from the
 * first answer instead. Null for any other message.
 */
export const titleFrom = (message: {
  readonly role: string
  readonly content: string | null
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}) => {
  const injected = message.metadata?.injected === true
  if (!(message.role === "user" && !injected) && message.role !== "assistant") return null
  if (!message.content) return null
  const text = message.content.replace(/\s+/g, " ").trim()
  if (!text) return null
  if (text.length <= 80) return text
  const cut = text.slice(0, 80)
  const space = cut.lastIndexOf(" ")
  return `${space > 40 ? cut.slice(0, space) : cut}…`
}

/**
 * What storing a message answers: its seq; its session's message count and summary after it; and
 * the newest seq the session held before it (0 for none). The history window (History.ts) extends
 * itself by it. Null when nothing was stored (the session is gone, or a gated write's gate was shut).
 */
export const StoredMessage = Schema.Struct({
  seq: Schema.Number,
  total: Schema.Number,
  through: Schema.Number,
  summary: Schema.NullOr(Schema.String),
  before: Schema.Number
})
export type StoredMessage = typeof StoredMessage.Type
// A JSON column: drivers hand it over parsed, but a string is taken too. Anything else is taken as
// nothing learned (the window is then read, History.ts): it is told after the message committed.
const decodeStoredOption = Schema.decodeUnknownOption(Schema.NullOr(Schema.Union(StoredMessage, Schema.parseJson(StoredMessage))))
export const decodeStored = (value: unknown) => Option.getOrNull(decodeStoredOption(value))
