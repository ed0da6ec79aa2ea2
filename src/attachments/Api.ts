/** `/api/v1/attachments`: files uploaded for chat (images for vision, text, PDF, audio). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BodyLimit } from "../contract/BodyLimit.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath } from "../contract/Params.ts"
import { AttachmentNotFound, AttachmentTooLarge, UnsupportedAttachmentType } from "./Errors.ts"
import { Attachment, AttachmentQuery, UploadForm, UploadQuery } from "./Model.ts"

const attachmentPath = idPath("Attachment")

export class AttachmentsApi extends HttpApiGroup.make("attachments")
  .add(
    HttpApiEndpoint.post("upload", "/api/v1/attachments/upload")
      .setUrlParams(UploadQuery)
      .setPayload(HttpApiSchema.Multipart(UploadForm))
      .addSuccess(Attachment, { status: 201 })
      .addError(detailBody(AttachmentTooLarge))
      .addError(detailBody(UnsupportedAttachmentType))
      .annotate(BodyLimit, "files")
      .annotate(RequiredScope, "attachments:write")
      .annotate(
        OpenApi.Description,
        "Upload a file (multipart/form-data, the file in `file`; `?session_id=` files it under a session). Its type is read from its content, not its name: images (png, jpeg, gif, webp), PDF, audio, UTF-8 text (plain, markdown, CSV, JSON). 413 past UPLOAD_MAX_BYTES, 415 for a type UPLOAD_ALLOWED_TYPES does not allow. A chat message refers to it as {\"attachment_id\": id}"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/attachments")
      .setUrlParams(AttachmentQuery)
      .addSuccess(Schema.Array(Attachment))
      .annotate(RequiredScope, "attachments:read")
      .annotate(
        OpenApi.Description,
        "The caller's attachments (every one for a caller that reaches every session), newest first; filter by type (image/png or image/*) and session_id; limit 1-500 (default 100)"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/attachments/:id")
      .setPath(attachmentPath)
      .addSuccess(Attachment)
      .annotate(RequiredScope, "attachments:read")
      .annotate(OpenApi.Description, "One attachment's metadata")
  )
  .add(
    HttpApiEndpoint.get("file", "/api/v1/attachments/:id/file")
      .setPath(attachmentPath)
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" }))
      .annotate(RequiredScope, "attachments:read")
      .annotate(
        OpenApi.Description,
        "The file's bytes with its sniffed Content-Type; images are served inline, anything else as a download (Content-Disposition: attachment), never rendered by the browser"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/attachments/:id")
      .setPath(attachmentPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "attachments:write")
      .annotate(OpenApi.Description, "Delete an attachment (messages that used it keep their copy)")
  )
  .addError(detailBody(AttachmentNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Attachments")
{}
