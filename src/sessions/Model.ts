/** Sessions and the messages in them. */
import { Schema } from "effect"
import { body, indexedText } from "../contract/Params.ts"

export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export class Session extends Schema.Class<Session>("Session")({
  id: Schema.UUID,
  bot_id: Schema.String,
  client_id: Schema.String,
  channel_id: Schema.NullOr(Schema.UUID),
  dispatch_config: JsonObject,
  /** From the first user message, until someone edits it (`PATCH /sessions/{id}`); null before any. */
  title: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date,
  /** When the session last had a message (or changed bot). */
  last_active: Schema.Date,
  /** Kept at the top of its list. */
  pinned: Schema.Boolean,
  /** Out of its list (listed with `archived=true`); kept, and found by search. */
  archived: Schema.Boolean
}) {}

/** `PATCH /api/v1/sessions/{id}`: only the fields sent change; at least one is sent. */
export const UpdateSessionState = body({
  title: Schema.optional(Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(200))),
  pinned: Schema.optional(Schema.Boolean),
  archived: Schema.optional(Schema.Boolean)
}).pipe(
  Schema.filter((update) =>
    update.title !== undefined || update.pinned !== undefined || update.archived !== undefined ||
    "Send at least one of title, pinned, archived"
  )
)

/** A conversation a search found, and the words around the first match in its messages (null: its title matched). */
export class SessionMatch extends Schema.Class<SessionMatch>("SessionMatch")({
  session: Session,
  snippet: Schema.NullOr(Schema.String)
}) {}

export class SessionSearchResults extends Schema.Class<SessionSearchResults>("SessionSearchResults")({
  results: Schema.Array(SessionMatch)
}) {}

export const UpdateSession = body({
  title: Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(200))
})

export const ToolCallRecord = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

export class Message extends Schema.Class<Message>("Message")({
  id: Schema.UUID,
  session_id: Schema.UUID,
  role: Schema.Literal("system", "user", "assistant", "tool"),
  /** Never null on the wire: an assistant message that only calls tools has "". */
  content: Schema.String,
  created_at: Schema.Date,
  metadata: JsonObject,
  tool_calls: Schema.NullOr(Schema.Array(ToolCallRecord)),
  tool_call_id: Schema.NullOr(Schema.String),
  attachments: Schema.Array(Schema.Unknown)
}) {}

export const CreateSession = body({
  /** Default `default` (a widget token's own bot). */
  bot_id: Schema.optional(Schema.String),
  client_id: Schema.optionalWith(indexedText("client_id").pipe(Schema.minLength(1)), { default: () => "default" }),
  dispatch_config: Schema.optional(JsonObject)
})

export class SessionCreated extends Schema.Class<SessionCreated>("SessionCreated")({
  session_id: Schema.UUID
}) {}

export class SessionWithMessages extends Schema.Class<SessionWithMessages>("SessionWithMessages")({
  ...Session.fields,
  messages: Schema.Array(Message)
}) {}

/** What the agent loop appends to a session. */
export interface NewMessage {
  readonly role: Message["role"]
  readonly content: string | null
  readonly tool_calls?: ReadonlyArray<typeof ToolCallRecord.Type> | null
  readonly tool_call_id?: string | null
  readonly attachments?: ReadonlyArray<unknown>
  readonly metadata?: Record<string, unknown>
}
