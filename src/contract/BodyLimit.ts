/**
 * Which size limit an endpoint's request body has. Unannotated endpoints take REQUEST_MAX_BYTES;
 * those that carry files (uploads, documents, workspace files, messages with inline images) take
 * UPLOAD_MAX_BYTES, and audio for transcription TRANSCRIBE_MAX_BYTES. The server refuses a larger
 * body with 413 before reading it (`src/http/RequestGuard.ts`).
 */
import { Context } from "effect"

export type BodyLimitKind = "files" | "audio"

export class BodyLimit extends Context.Tag("cairn/BodyLimit")<BodyLimit, BodyLimitKind>() {}
