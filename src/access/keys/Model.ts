/** Scoped API keys: what an admin sends and what the API answers (never the key value, but once). */
import { Schema } from "effect"
import { ScopeName } from "../../auth/Scopes.ts"
import { bodyOptions } from "../../contract/Params.ts"

const KeyName = Schema.Trim.pipe(Schema.minLength(1, { message: () => "Name must not be empty" }), Schema.maxLength(200))

export class ApiKeyView extends Schema.Class<ApiKeyView>("ApiKeyView")({
  id: Schema.String,
  name: Schema.String,
  /** The first characters of the value (`ask_AbCd…`), to tell keys apart; never enough to use. */
  prefix: Schema.String,
  scopes: Schema.Array(Schema.String),
  created_at: Schema.Date,
  expires_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date),
  last_used_at: Schema.NullOr(Schema.Date),
  /**
   * The signed-in user who made the key; null when the static key made it (or it predates owners).
   * A user's keys share one lane at the provider: many keys are served as one caller.
   */
  owner_user_id: Schema.NullOr(Schema.String),
  /** `active`, `revoked` or `expired`, at the time of the answer. */
  status: Schema.Literal("active", "revoked", "expired")
}) {}

export class CreatedApiKey extends Schema.Class<CreatedApiKey>("CreatedApiKey")({
  id: Schema.String,
  name: Schema.String,
  /** The key value: shown in this response only, stored as a hash. */
  key: Schema.String,
  /** The same value under the name the companion clients read. */
  full_key: Schema.String,
  prefix: Schema.String,
  scopes: Schema.Array(Schema.String),
  created_at: Schema.Date,
  expires_at: Schema.NullOr(Schema.Date),
  /** As on `ApiKeyView`: the signed-in user who made it, or null. */
  owner_user_id: Schema.NullOr(Schema.String)
}) {}

export class CreateApiKey extends Schema.Class<CreateApiKey>("CreateApiKey")(
  {
    name: KeyName,
    scopes: Schema.Array(ScopeName),
    expires_at: Schema.optional(Schema.NullOr(Schema.Date))
  },
  bodyOptions
) {}

export class UpdateApiKey extends Schema.Class<UpdateApiKey>("UpdateApiKey")(
  {
    name: Schema.optional(KeyName),
    scopes: Schema.optional(Schema.Array(ScopeName))
  },
  bodyOptions
) {}

export class ApiKeyList extends Schema.Class<ApiKeyList>("ApiKeyList")({
  keys: Schema.Array(ApiKeyView)
}) {}
