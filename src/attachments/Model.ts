/** Uploaded attachments as the API shows them (never their bytes: `GET …/{id}/file` serves those). */
import { Multipart } from "@effect/platform"
import { Schema } from "effect"
import { limitParam, queryParams } from "../contract/Params.ts"
import { TimestampText } from "../contract/Time.ts"

export class Attachment extends Schema.Class<Attachment>("Attachment")({
  id: Schema.UUID,
  name: Schema.String,
  /** What the bytes are, sniffed at upload (the client's claim is not taken). */
  type: Schema.String,
  size_bytes: Schema.Number,
  sha256: Schema.String,
  session_id: Schema.NullOr(Schema.String),
  created_at: TimestampText,
  /** Where its bytes are served. */
  url: Schema.String
}) {}

export const AttachmentQuery = queryParams({
  /** A type (`image/png`) or a family (`image/*`). */
  type: Schema.optional(Schema.String.pipe(Schema.pattern(/^[a-z]+\/(?:[a-z0-9][a-z0-9.+-]*|\*)$/))),
  session_id: Schema.optional(Schema.UUID),
  limit: limitParam()
})

export const UploadQuery = queryParams({
  /** The session the file is for (listed under it); optional. */
  session_id: Schema.optional(Schema.UUID)
})

/** The upload's body, as documented: a multipart form with the file in `file`. */
export const UploadForm = Schema.Struct({ file: Multipart.SingleFileSchema })
