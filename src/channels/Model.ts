/** A channel: where a client talks to a bot, with its per-channel settings. */
import { Schema } from "effect"
import { RetrievalOverride } from "../bots/Model.ts"
import { bodyOptions, indexedText } from "../contract/Params.ts"
import { Timestamp } from "../contract/Time.ts"

const nonBlank = (what: string) => indexedText(what).pipe(Schema.filter((value) => value.trim().length > 0 || `${what} must not be blank`))

export const ChannelName = nonBlank("name")
/** Integration channels use `<prefix><external id>` (`msgbridge:+4670...`); admin-made ones `channel:<id>`. */
export const ClientId = nonBlank("client_id")
export const BotIdRef = nonBlank("bot_id")
/** A model id (`provider/model` or a bare model) used instead of the bot's for this channel. */
export const ModelOverride = Schema.NullOr(nonBlank("model_override"))

export class Channel extends Schema.Class<Channel>("Channel")({
  id: Schema.UUID,
  name: Schema.String,
  bot_id: Schema.String,
  client_id: Schema.String,
  require_mention: Schema.Boolean,
  passive_memory: Schema.Boolean,
  workspace_enabled: Schema.Boolean,
  /** The session new messages on this channel go to; null until one is made. */
  active_session_id: Schema.NullOr(Schema.UUID),
  model_override: Schema.NullOr(Schema.String),
  /** Retrieval settings over the bot's (see bots' `retrieval`); null: the bot's. */
  retrieval: Schema.NullOr(RetrievalOverride),
  /** Free-form settings of the integrations bound to the channel. */
  integration_config: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The integration whose registered client id prefix `client_id` starts with; null for others. */
  integration: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** `GET /api/v1/channels/{id}/config`: a channel's settings alone. */
export class ChannelConfig extends Schema.Class<ChannelConfig>("ChannelConfig")({
  require_mention: Schema.Boolean,
  passive_memory: Schema.Boolean,
  workspace_enabled: Schema.Boolean,
  model_override: Schema.NullOr(Schema.String),
  retrieval: Schema.NullOr(RetrievalOverride),
  integration_config: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}) {}

export class ChannelList extends Schema.Class<ChannelList>("ChannelList")({ channels: Schema.Array(Channel) }) {}

/** `GET /api/v1/admin/channels`: a page of channels as the companion clients read it. */
export class ChannelPage extends Schema.Class<ChannelPage>("ChannelPage")({
  channels: Schema.Array(Channel),
  total: Schema.Number,
  page: Schema.Number,
  page_size: Schema.Number
}) {}

const flag = Schema.optionalWith(Schema.Boolean, { default: () => false, exact: true })

/** `POST /api/v1/admin/channels`: an explicit channel; client_id defaults to `channel:<id>`. */
export class CreateChannel extends Schema.Class<CreateChannel>("CreateChannel")(
  {
    name: ChannelName,
    bot_id: BotIdRef,
    client_id: Schema.optionalWith(ClientId, { exact: true }),
    require_mention: flag,
    passive_memory: flag,
    workspace_enabled: flag,
    model_override: Schema.optionalWith(ModelOverride, { default: () => null, exact: true })
  },
  bodyOptions
) {}

/** `POST /api/v1/channels`: the channel of (client_id, bot_id), made on first use. */
export class EnsureChannel extends Schema.Class<EnsureChannel>("EnsureChannel")(
  {
    client_id: ClientId,
    bot_id: BotIdRef,
    /** Used only when the channel is made; defaults to the client_id. */
    name: Schema.optionalWith(ChannelName, { exact: true })
  },
  bodyOptions
) {}

/**
 * `PATCH /api/v1/channels/{id}`: only the fields sent change. An unknown field is refused rather
 * than ignored, so a typo (or a field that is not editable here) never looks like a success.
 */
export class UpdateChannel extends Schema.Class<UpdateChannel>("UpdateChannel")(
  {
    name: Schema.optionalWith(ChannelName, { exact: true }),
    require_mention: Schema.optionalWith(Schema.Boolean, { exact: true }),
    passive_memory: Schema.optionalWith(Schema.Boolean, { exact: true }),
    workspace_enabled: Schema.optionalWith(Schema.Boolean, { exact: true }),
    model_override: Schema.optionalWith(ModelOverride, { exact: true }),
    retrieval: Schema.optionalWith(Schema.NullOr(RetrievalOverride), { exact: true })
  },
  [undefined, undefined, { parseOptions: { errors: "all", onExcessProperty: "error" } }]
) {}

export interface ChannelFilter {
  readonly bot_id?: string | undefined
  readonly client_id?: string | undefined
  /** Only channels whose client id starts with this (an integration's registered prefix). */
  readonly client_prefix?: string | undefined
  readonly limit: number
  readonly offset: number
}

export const defaultListLimit = 100
export const maxListLimit = 500
