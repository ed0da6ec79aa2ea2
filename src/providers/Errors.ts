/** What the providers domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class ProviderNotFound extends Schema.TaggedError<ProviderNotFound>()(
  "ProviderNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No provider with that id" })
) {}

export class ProviderConflict extends Schema.TaggedError<ProviderConflict>()(
  "ProviderConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The id is taken, or the provider is configured by the environment" })
) {}

export class ProviderFailed extends Schema.TaggedError<ProviderFailed>()(
  "ProviderFailed",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 502, description: "The provider failed, or did not answer in time" })
) {}
