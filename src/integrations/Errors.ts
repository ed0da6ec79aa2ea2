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
