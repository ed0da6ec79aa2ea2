/** What API keys can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()(
  "ApiKeyNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No API key with that id" })
) {}
