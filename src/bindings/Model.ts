/** A channel integration binding: an integration type attached to a channel under a client id. */
import { Schema } from "effect"
import { bodyOptions, indexedText } from "../contract/Params.ts"
import { Timestamp } from "../contract/Time.ts"

export const IntegrationType = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: () => "integration_type is 1-64 characters: lowercase letters, digits, '-' and '_'"
  })
)

/** `<prefix><external id>`: a prefix of letters, digits, '.', '-' or '_' ending in ':', then the external id. */
export const BindingClientId = indexedText("client_id").pipe(
  // eslint-disable-next-line no-control-regex
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}:[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$/, {
    message: () => "client_id must be <prefix><external id>, the prefix ending in ':' (for example msgbridge:<chat guid>)"
  })
)

export const WakeWord = Schema.String.pipe(
  Schema.filter((value) => value.trim().length > 0 || "wake words must not be blank"),
  Schema.maxLength(100, { message: () => "a wake word is at most 100 characters" })
)

export const HudPreset = Schema.Literal("default", "none")

export class Binding extends Schema.Class<Binding>("Binding")({
  id: Schema.UUID,
  channel_id: Schema.UUID,
  integration_type: Schema.String,
  client_id: Schema.String,
  wake_words: Schema.Array(Schema.String),
  /** Whether the bot's name and id count as wake words on this binding. */
  use_bot_wake_word: Schema.Boolean,
  hud_preset: HudPreset,
  created_at: Timestamp
}) {}

export class BindingList extends Schema.Class<BindingList>("BindingList")({ bindings: Schema.Array(Binding) }) {}

export const maxWakeWords = 50

export class CreateBinding extends Schema.Class<CreateBinding>("CreateBinding")(
  {
    integration_type: IntegrationType,
    client_id: BindingClientId,
    wake_words: Schema.optionalWith(
      Schema.Array(WakeWord).pipe(Schema.maxItems(maxWakeWords, { message: () => `at most ${maxWakeWords} wake words` })),
      { default: () => [], exact: true }
    ),
    use_bot_wake_word: Schema.optionalWith(Schema.Boolean, { default: () => true, exact: true }),
    hud_preset: Schema.optionalWith(HudPreset, { default: () => "default" as const, exact: true })
  },
  bodyOptions
) {}

/**
 * `PATCH /api/v1/channels/{id}/integrations/{binding_id}`: a binding's behaviour, only the fields
 * sent. Its integration type and client id are what it is; changing those is another binding.
 */
export class UpdateBinding extends Schema.Class<UpdateBinding>("UpdateBinding")(
  {
    wake_words: Schema.optionalWith(
      Schema.Array(WakeWord).pipe(Schema.maxItems(maxWakeWords, { message: () => `at most ${maxWakeWords} wake words` })),
      { exact: true }
    ),
    use_bot_wake_word: Schema.optionalWith(Schema.Boolean, { exact: true }),
    hud_preset: Schema.optionalWith(HudPreset, { exact: true })
  },
  [undefined, undefined, { parseOptions: { errors: "all", onExcessProperty: "error" } }]
) {}

/** A binding joined with the channel it belongs to, for routing inbound messages. */
export interface BoundChannel {
  readonly binding: Binding
  readonly channel_id: string
  readonly bot_id: string
}
