/** Widget token mint: request and answer, as the spec names them. */
import { Schema } from "effect"
import { bodyOptions } from "../../contract/Params.ts"

export class MintWidgetToken extends Schema.Class<MintWidgetToken>("MintWidgetToken")(
  {
    source_bot_id: Schema.String.pipe(Schema.minLength(1, { message: () => "source_bot_id must not be empty" })),
    pin_id: Schema.optional(Schema.NullOr(Schema.String))
  },
  bodyOptions
) {}

export class WidgetToken extends Schema.Class<WidgetToken>("WidgetToken")({
  token: Schema.String,
  expires_at: Schema.Date,
  /** Seconds until expiry: 900 (15 minutes), less when the bot's key expires sooner. */
  expires_in: Schema.Number,
  bot_id: Schema.String,
  bot_name: Schema.String,
  scopes: Schema.Array(Schema.String)
}) {}

/**
 * An origin a page may embed the widget from: scheme, host and port, as the browser spells it
 * (`https://shop.example.com`, `http://127.0.0.1:8080`). A path or a wildcard would not mean what it
 * seems in `frame-ancestors`, so neither is taken.
 */
export const EmbedOrigin = Schema.String.pipe(
  Schema.filter((value) => isEmbedOrigin(value) || `Each origin is scheme, host and port (https://shop.example.com), not "${value}"`)
)

const originShape = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/

/** Whether the text is an origin exactly as a browser would give it (lower case, no default port). */
export const isEmbedOrigin = (value: string): boolean => {
  if (!originShape.test(value)) return false
  try {
    return new URL(value).origin === value
  } catch {
    return false
  }
}

/** A bot's widget settings as the console edits them. */
export class WidgetSettings extends Schema.Class<WidgetSettings>("WidgetSettings")({
  bot_id: Schema.String,
  /** The sites allowed to embed this bot's widget, edited at runtime. */
  allowed_origins: Schema.Array(Schema.String),
  /** Allowed for every bot by WIDGET_EMBED_ORIGINS (the server's setting; read-only here). */
  default_origins: Schema.Array(Schema.String),
  /** Whether the bot has an API key set (`api_key_id`): without one no widget token can be minted. */
  has_api_key: Schema.Boolean,
  updated_at: Schema.NullOr(Schema.Date)
}) {}

export class UpdateWidgetSettings extends Schema.Class<UpdateWidgetSettings>("UpdateWidgetSettings")(
  {
    allowed_origins: Schema.Array(EmbedOrigin).pipe(
      Schema.maxItems(100, { message: () => "At most 100 origins may be allowed" })
    )
  },
  bodyOptions
) {}

/** A visitor's line of the conversation, as the widget shows it again after the host page reloads. */
export class WidgetLine extends Schema.Class<WidgetLine>("WidgetLine")({
  role: Schema.Literal("user", "assistant"),
  text: Schema.String,
  /** How many files were attached to a user message. */
  attachments: Schema.Number,
  created_at: Schema.Date
}) {}

export class WidgetConversation extends Schema.Class<WidgetConversation>("WidgetConversation")({
  /** Null until the visitor's first message. */
  session_id: Schema.NullOr(Schema.String),
  lines: Schema.Array(WidgetLine)
}) {}
