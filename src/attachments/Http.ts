import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { ValidationError } from "../contract/Errors.ts"
import { contentDisposition } from "../http/ContentDisposition.ts"
import { multipartFile } from "../http/Upload.ts"
import { UploadMaxBytes } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { Attachments } from "./Attachments.ts"
import { AttachmentTooLarge } from "./Errors.ts"
import { imageTypes } from "./FileTypes.ts"

export const AttachmentsHttpLive = HttpApiBuilder.group(CairnApi, "attachments", (handlers) =>
  Effect.gen(function*() {
    const attachments = yield* Attachments
    const settings = yield* Settings
    return handlers
      .handleRaw("upload", ({ request, urlParams }) =>
        Effect.gen(function*() {
          const principal = yield* Principal
          const maxBytes = yield* settings.get(UploadMaxBytes)
          if (!(request.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
            return yield* ValidationError.single(
              ["header", "content-type"],
              "Send the file as multipart/form-data, in a `file` field",
              "unsupported_content_type"
            )
          }
          const file = yield* multipartFile(request, { field: "file", maxBytes }).pipe(
            Effect.catchAll((error): Effect.Effect<never, AttachmentTooLarge | ValidationError> =>
              error.tooLarge
                ? Effect.fail(new AttachmentTooLarge({ detail: `The file is larger than ${maxBytes} bytes (UPLOAD_MAX_BYTES)` }))
                : ValidationError.single(["body"], "The body is not a readable multipart form", "invalid_multipart")
            )
          )
          if (!file) return yield* ValidationError.single(["body", "file"], "A multipart body needs the file in a `file` field", "missing")
          const stored = yield* attachments.upload(principal, file, urlParams.session_id ?? null)
          return HttpServerResponse.unsafeJson(stored, { status: 201 })
        }))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Principal, (principal) =>
          attachments.list(principal, { type: urlParams.type, sessionId: urlParams.session_id, limit: urlParams.limit })))
      .handle("get", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          attachments.get(principal, path.id)))
      .handleRaw("file", ({ path }) =>
        Effect.gen(function*() {
          const principal = yield* Principal
          const { row, bytes } = yield* attachments.file(principal, path.id)
          const image = imageTypes.includes(row.type)
          return HttpServerResponse.uint8Array(bytes, {
            contentType: row.type,
            headers: {
              "content-disposition": contentDisposition(image ? "inline" : "attachment", row.name),
              "x-content-type-options": "nosniff",
              // Even opened directly, nothing in it runs: no scripts, no plugins, no requests.
              "content-security-policy": "default-src 'none'; sandbox",
              "cache-control": "private, max-age=3600"
            }
          })
        }))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (principal) => attachments.remove(principal, path.id)))
  }))
