/**
 * A message as it comes in, whatever surface sends it: the request of `/chat` and `/chat/stream`
 * as the spec gives it, which the OpenAI-compatible surface, MCP's `chat_with_bot`, heartbeats and
 * integrations build too. Contract-safe: the typed client and the web app use it.
 */
import { Schema } from "effect"
import { body, indexedText } from "../contract/Params.ts"
import { Base64, MessageAttachment } from "../sessions/Attachments.ts"
import { JsonObject } from "../sessions/Model.ts"

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
  /**
   * Regenerate, edit and resend: the user message (of this session, or of the one it was branched
   * from) that this one is sent again in place of. Its stored images go to the model again, before
   * any sent with this request.
   */
  resend_of: Schema.optional(Schema.UUID),
  dispatch_type: Schema.optional(DispatchType),
  dispatch_config: Schema.optional(JsonObject),
  model_override: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  passive: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /**
   * A session already running a turn (or a paused system): `queue` (default) takes the message as
   * a queued task, run when the session is free; `reject` answers 409 and keeps nothing.
   */
  if_busy: Schema.optional(Schema.Literal("queue", "reject"))
})
export type ChatRequest = typeof ChatRequest.Type
