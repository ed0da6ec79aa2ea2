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

export class UnsupportedDocument extends Schema.TaggedError<UnsupportedDocument>()(
  "UnsupportedDocument",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 415,
    description: "The file is not one a document is made from (a PDF, or UTF-8 text such as Markdown), or has no text"
  })
) {}

export class DocumentTooLarge extends Schema.TaggedError<DocumentTooLarge>()(
  "DocumentTooLarge",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 413, description: "The file's text is longer than a document takes" })
) {}
