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
