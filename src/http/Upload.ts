/**
 * The one file a multipart body carries in a named field (`file`), read whole within a byte limit;
 * other parts are drained unread. Used by `/transcribe` and `/api/v1/attachments/upload`.
 */
import { type HttpServerRequest, Multipart } from "@effect/platform"
import { Data, Effect, Option, Stream } from "effect"

export interface UploadedFile {
  readonly bytes: Uint8Array
  /** The part's declared type: a hint at most, never trusted for what the bytes are. */
  readonly contentType: string
  readonly name: string
}

/** The body (or a part) is larger than the limit, or is not a readable multipart body. */
/** Room in a multipart body for what is not the file: boundaries, part headers, small fields. */
const formOverhead = 64 * 1024

export class UploadUnreadable extends Data.TaggedError("UploadUnreadable")<{ readonly tooLarge: boolean }> {}

/** The file in `field`, or null when the body has none. */
export const multipartFile = (
  request: HttpServerRequest.HttpServerRequest,
  options: { readonly field: string; readonly maxBytes: number; readonly maxParts?: number }
): Effect.Effect<UploadedFile | null, UploadUnreadable> =>
  Stream.runFoldEffect(
    // The parser drops a file past `maxFileSize` without a word, so the limit is the body's (the
    // file plus room for the form's other parts and headers) and the file's size is checked after.
    Multipart.withLimitsStream(request.multipartStream, {
      maxTotalSize: Option.some(options.maxBytes + formOverhead),
      maxParts: Option.some(options.maxParts ?? 16)
    }),
    null as UploadedFile | null,
    (file, part): Effect.Effect<UploadedFile | null, Multipart.MultipartError | UploadUnreadable> =>
      !Multipart.isFile(part)
        ? Effect.succeed(file)
        : part.key === options.field && file === null
        ? Effect.flatMap(part.contentEffect, (bytes) =>
          bytes.length > options.maxBytes
            ? Effect.fail(new UploadUnreadable({ tooLarge: true }))
            : Effect.succeed<UploadedFile>({ bytes, contentType: part.contentType, name: part.name }))
        : Effect.as(Stream.runDrain(part.content), file)
  ).pipe(
    Effect.mapError((error) =>
      error._tag === "UploadUnreadable"
        ? error
        : new UploadUnreadable({
          tooLarge: error._tag === "MultipartError" && (error.reason === "FileTooLarge" || error.reason === "BodyTooLarge")
        })
    )
  )
