/** What the integrations domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class IntegrationNotFound extends Schema.TaggedError<IntegrationNotFound>()(
  "IntegrationNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No integration with that id, or it failed to load" })
) {}

export class ToolNotFound extends Schema.TaggedError<ToolNotFound>()(
  "ToolNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No tool with that name" })
) {}

export class NoConnectionCheck extends Schema.TaggedError<NoConnectionCheck>()(
  "NoConnectionCheck",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The integration declares no connection check (its SETUP has no check)" })
) {}
