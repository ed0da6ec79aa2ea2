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
  archived: Schema.Boolean,
  /** The model that answers this conversation (a request's `model_override` wins); null: the channel's or bot's. */
  model: Schema.NullOr(Schema.String),
  /** Instructions for this conversation, after its bot's prompt; null: none. */
  system_prompt: Schema.NullOr(Schema.String),
  /** The sampling temperature of this conversation's model calls; null: the bot's. */
  temperature: Schema.NullOr(Schema.Number),
  /** A branch (edit and resend, regenerate): the session it took its first `fork_point` messages from. */
  forked_from: Schema.NullOr(Schema.UUID),
  fork_point: Schema.NullOr(Schema.Number)
}) {}

/** A conversation's own settings: each sent changes (null clears it back to the bot's). */
export const sessionSettingsFields = {
  model: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(200)))),
  system_prompt: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(20_000)))),
  temperature: Schema.optional(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 2))))
}

/** `PATCH /api/v1/sessions/{id}`: only the fields sent change; at least one is sent. */
export const UpdateSessionState = body({
  title: Schema.optional(Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(200))),
  pinned: Schema.optional(Schema.Boolean),
  archived: Schema.optional(Schema.Boolean),
  ...sessionSettingsFields
}).pipe(
  Schema.filter((update) =>
    Object.values(update).some((value) => value !== undefined) ||
    "Send at least one of title, pinned, archived, model, system_prompt, temperature"
  )
)
export type UpdateSessionState = typeof UpdateSessionState.Type

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

/** `POST /api/v1/sessions/{id}/fork`: a branch of the conversation that takes the messages before `message_id`. */
export const ForkSession = body({
  message_id: Schema.UUID
})

/** One session of a conversation's family: the conversation and its branches (the chat's versions). */
export class SessionBranch extends Schema.Class<SessionBranch>("SessionBranch")({
  id: Schema.UUID,
  forked_from: Schema.NullOr(Schema.UUID),
  fork_point: Schema.NullOr(Schema.Number),
  title: Schema.NullOr(Schema.String),
  created_at: Schema.Date
}) {}

export class SessionFamily extends Schema.Class<SessionFamily>("SessionFamily")({
  branches: Schema.Array(SessionBranch)
}) {}

/** A message as an export carries it and an import takes it: the stored message less its ids. */
export const ExportedMessage = Schema.Struct({
  role: Message.fields.role,
  content: Schema.String,
  created_at: Schema.optional(Schema.Date),
  metadata: Schema.optional(JsonObject),
  tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCallRecord))),
  tool_call_id: Schema.optional(Schema.NullOr(Schema.String)),
  attachments: Schema.optional(Schema.Array(Schema.Unknown))
})

export const exportFormat = "cairn.session/1"

/** `GET /api/v1/sessions/{id}/export`: a conversation whole, its tool calls and results included. */
export class SessionExport extends Schema.Class<SessionExport>("SessionExport")({
  format: Schema.Literal(exportFormat),
  exported_at: Schema.Date,
  session: Schema.Struct({
    id: Schema.optional(Schema.String),
    title: Schema.NullOr(Schema.String),
    bot_id: Schema.optional(Schema.String),
    model: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
    system_prompt: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
    temperature: Schema.optionalWith(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 2))), { default: () => null }),
    created_at: Schema.optional(Schema.Date)
  }),
  messages: Schema.Array(ExportedMessage).pipe(Schema.maxItems(10_000))
}) {}

/** `POST /api/v1/sessions/import`: an export made a new conversation of the caller's, on the bot and client named. */
export const ImportSession = body({
  bot_id: Schema.optional(Schema.String),
  client_id: Schema.optionalWith(indexedText("client_id").pipe(Schema.minLength(1)), { default: () => "default" }),
  export: SessionExport
})
