/** What /api/v1/discover and /api/v1/scopes answer. */
import { Schema } from "effect"

export class EndpointEntry extends Schema.Class<EndpointEntry>("EndpointEntry")({
  method: Schema.String,
  path: Schema.String,
  description: Schema.String,
  /** The scope the endpoint requires; `public` needs no credentials, `authenticated` any valid one. */
  scope: Schema.String
}) {}

const ScopeInfo = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  /** The endpoints this scope opens, as `METHOD /path` (a deprecated scope: those of the scope it stands in for). */
  routes: Schema.Array(Schema.String),
  /** The current scope a deprecated one stands in for. */
  deprecated_for: Schema.optional(Schema.String)
})

export class ScopeCatalogue extends Schema.Class<ScopeCatalogue>("ScopeCatalogue")({
  groups: Schema.Array(Schema.Struct({ name: Schema.String, scopes: Schema.Array(ScopeInfo) })),
  /** Scopes that grant others beyond themselves (`admin` grants every scope). */
  implications: Schema.Array(Schema.Struct({ scope: Schema.String, implies: Schema.Array(Schema.String) })),
  presets: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, scopes: Schema.Array(Schema.String) })),
  /** The scopes users with the `member` role hold. */
  member_scopes: Schema.Array(Schema.String)
}) {}
