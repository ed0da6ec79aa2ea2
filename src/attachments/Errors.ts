/** What the attachments domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class AttachmentNotFound extends Schema.TaggedError<AttachmentNotFound>()(
  "AttachmentNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No attachment with that id that the caller owns" })
) {}

export class AttachmentTooLarge extends Schema.TaggedError<AttachmentTooLarge>()(
  "AttachmentTooLarge",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 413, description: "The file is larger than UPLOAD_MAX_BYTES" })
) {}

export class UnsupportedAttachmentType extends Schema.TaggedError<UnsupportedAttachmentType>()(
  "UnsupportedAttachmentType",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 415, description: "The file's content is not a type UPLOAD_ALLOWED_TYPES allows" })
) {}
