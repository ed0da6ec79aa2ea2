/**
 * Uploaded files: stored with the type their bytes are (sniffed, within UPLOAD_MAX_BYTES and
 * UPLOAD_ALLOWED_TYPES), owned by the caller who uploaded them, and reached by that caller (or one
 * that reaches every session, as sessions are). A chat message refers to them by id: images go to
 * the model as vision input, text files into the message.
 */
import { Effect } from "effect"
import { createHash, randomUUID } from "node:crypto"
import type { PrincipalShape } from "../auth/Principal.ts"
import { ValidationError } from "../contract/Errors.ts"
import { isUuid } from "../contract/Params.ts"
import type { UploadedFile } from "../http/Upload.ts"
import { ownerOf, reachesEverySession } from "../sessions/Access.ts"
import type { ImageAttachment } from "../sessions/Attachments.ts"
import { UploadAllowedTypes, UploadMaxBytes } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { traced } from "../telemetry/Spans.ts"
import { AttachmentNotFound, AttachmentTooLarge, UnsupportedAttachmentType } from "./Errors.ts"
import { imageTypes, isText, safeFileName, sniffType, typeAllowed } from "./FileTypes.ts"
import { Attachment } from "./Model.ts"
import { type AttachmentRow, AttachmentsRepo } from "./Repo.ts"

export const toAttachment = (row: AttachmentRow) => new Attachment({ ...row, url: `/api/v1/attachments/${row.id}/file` })

/** A chat message's references, made into what the turn takes: inline images, and text to add to the message. */
export interface ResolvedReferences {
  readonly images: ReadonlyArray<ImageAttachment>
  readonly texts: ReadonlyArray<{ readonly name: string; readonly type: string; readonly text: string }>
}

export class Attachments extends Effect.Service<Attachments>()("cairn/Attachments", {
  effect: Effect.gen(function*() {
    const repo = yield* AttachmentsRepo
    const settings = yield* Settings

    const notFound = (id: string) => new AttachmentNotFound({ detail: `Attachment not found: ${id}` })

    /** The attachment, when the caller reaches it; someone else's is not found, as an unknown id. */
    const reach = (principal: PrincipalShape, id: string) =>
      Effect.gen(function*() {
        const row = isUuid(id) ? yield* repo.find(id) : undefined
        if (!row || (!reachesEverySession(principal) && row.owner !== ownerOf(principal))) return yield* notFound(id)
        return row
      })

    const upload = (principal: PrincipalShape, file: UploadedFile, sessionId: string | null) =>
      Effect.gen(function*() {
        const maxBytes = yield* settings.get(UploadMaxBytes)
        if (file.bytes.length > maxBytes) {
          return yield* new AttachmentTooLarge({
            detail: `The file is ${file.bytes.length} bytes; the limit is ${maxBytes} (UPLOAD_MAX_BYTES)`
          })
        }
        const name = safeFileName(file.name)
        const type = sniffType(file.bytes, name)
        if (type === null) {
          return yield* new UnsupportedAttachmentType({
            detail:
              `${name} is not a file type Cairn recognises (images, PDF, audio, UTF-8 text); its content decides, not its name or declared type`
          })
        }
        const allowed = yield* settings.get(UploadAllowedTypes)
        if (!typeAllowed(type, allowed)) {
          return yield* new UnsupportedAttachmentType({
            detail: `${name} is ${type}, which uploads may not be (UPLOAD_ALLOWED_TYPES: ${allowed.join(", ")})`
          })
        }
        const row = yield* repo.insert({
          id: randomUUID(),
          owner: ownerOf(principal),
          name,
          type,
          sha256: createHash("sha256").update(file.bytes).digest("hex"),
          sessionId,
          data: file.bytes
        })
        return toAttachment(row)
      })

    const list = (
      principal: PrincipalShape,
      filter: { readonly type?: string | undefined; readonly sessionId?: string | undefined; readonly limit?: number | undefined }
    ) =>
      Effect.map(
        repo.list({ ...filter, limit: filter.limit ?? 100, owner: reachesEverySession(principal) ? undefined : ownerOf(principal) }),
        (rows) => rows.map(toAttachment)
      )

    const get = (principal: PrincipalShape, id: string) => Effect.map(reach(principal, id), toAttachment)

    /** The file and its bytes, for serving. */
    const file = (principal: PrincipalShape, id: string) =>
      Effect.gen(function*() {
        const row = yield* reach(principal, id)
        const bytes = yield* repo.bytes(id)
        if (!bytes) return yield* notFound(id)
        return { row, bytes }
      })

    const remove = (principal: PrincipalShape, id: string) =>
      Effect.gen(function*() {
        yield* reach(principal, id)
        if (!(yield* repo.remove(id))) return yield* notFound(id)
      })

    /**
     * A message's `{attachment_id}` references, each one the caller reaches: images inline (as if
     * sent with `data`), text files as text; any other type is refused (422), as is an unknown id.
     */
    const resolve = (
      principal: PrincipalShape,
      references: ReadonlyArray<{ readonly index: number; readonly id: string }>,
      maxBytes: number
    ) =>
      Effect.gen(function*() {
        const images: Array<ImageAttachment> = []
        const texts: Array<{ name: string; type: string; text: string }> = []
        const rows: Array<{ readonly index: number; readonly row: AttachmentRow }> = []
        // Every reference is checked (reached, a usable type, within the size) before any file is read.
        for (const { index, id } of references) {
          const loc = ["body", "attachments", index, "attachment_id"]
          const row = yield* reach(principal, id).pipe(
            Effect.catchTag("AttachmentNotFound", (error) => ValidationError.single(loc, error.detail, "not_found"))
          )
          if (!imageTypes.includes(row.type) && !isText(row.type)) {
            return yield* ValidationError.single(
              loc,
              `${row.name} is ${row.type}: a chat message takes images and text files`,
              "unsupported_attachment"
            )
          }
          if (row.size_bytes > maxBytes) {
            return yield* ValidationError.single(
              loc,
              `${row.name} is ${row.size_bytes} bytes; the limit is ${maxBytes} (ATTACHMENT_MAX_BYTES)`,
              "attachment_too_large"
            )
          }
          rows.push({ index, row })
        }
        for (const { index, row } of rows) {
          const loc = ["body", "attachments", index, "attachment_id"]
          const bytes = yield* repo.bytes(row.id)
          if (!bytes) return yield* ValidationError.single(loc, `Attachment not found: ${row.id}`, "not_found")
          if (imageTypes.includes(row.type)) {
            images.push({
              type: "image",
              mime_type: row.type as ImageAttachment["mime_type"],
              name: row.name,
              data: Buffer.from(bytes).toString("base64")
            })
          } else {
            texts.push({ name: row.name, type: row.type, text: Buffer.from(bytes).toString("utf8") })
          }
        }
        return { images, texts } satisfies ResolvedReferences
      })

    return traced("Attachments", { upload, list, get, file, remove, resolve } as const)
  }),
  dependencies: [AttachmentsRepo.Default, Settings.Default]
}) {}
