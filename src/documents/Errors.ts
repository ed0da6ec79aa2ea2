/** What the documents domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class DocumentNotFound extends Schema.TaggedError<DocumentNotFound>()(
  "DocumentNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No document with that id" })
) {}

export class EmbeddingFailed extends Schema.TaggedError<EmbeddingFailed>()(
  "EmbeddingFailed",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 502, description: "The embedding model failed" })
) {}
