/**
 * Documents in the chat: a file the user uploaded (`POST /api/v1/attachments/upload`: its size and
 * type limits) made a document of one conversation (`session_id`, the spec's scope). Its text is
 * read (a PDF's text layer, or the text file as it is), chunked and embedded, and from then on
 * retrieval in that conversation's turns (and its branches') finds it, and no other conversation's,
 * and no other user's search (`DocumentScope`, Model.ts).
 *
 * Only the conversation's owner adds, lists or removes its documents (an admin may too): reaching
 * a session (a `sessions:read` key reaches every one) is not owning it.
 */
import { Effect } from "effect"
import { Attachments } from "../attachments/Attachments.ts"
import type { PrincipalShape } from "../auth/Principal.ts"
import { Documents } from "../documents/Documents.ts"
import { DocumentNotFound, DocumentTooLarge } from "../documents/Errors.ts"
import { chatIntegration, DocumentDeleted, DocumentSummary, MAX_CONTENT_CHARS, type SessionDocumentCreate } from "../documents/Model.ts"
import { ownerOf } from "../sessions/Access.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"
import { extractText } from "./DocumentText.ts"

export class SessionDocuments extends Effect.Service<SessionDocuments>()("cairn/SessionDocuments", {
  effect: Effect.gen(function*() {
    const documents = yield* Documents
    const sessions = yield* Sessions
    const attachments = yield* Attachments

    /** The upload made a document of the conversation (created first when the client chose its id, as `/chat` does). */
    const add = (principal: PrincipalShape, sessionId: string, input: typeof SessionDocumentCreate.Type) =>
      Effect.gen(function*() {
        yield* sessions.getOrCreateWithId(principal, sessionId, input.client_id ?? "default", input.bot_id ?? "default", null)
        yield* sessions.own(principal, sessionId)
        const { row, bytes } = yield* attachments.file(principal, input.attachment_id)
        const { text, pages } = yield* extractText(row.name, row.type, bytes)
        if (text.length > MAX_CONTENT_CHARS) {
          return yield* new DocumentTooLarge({
            detail: `${row.name} holds ${text.length} characters of text; a document takes at most ${MAX_CONTENT_CHARS}`
          })
        }
        const document = yield* documents.ingest({
          title: row.name,
          content: text,
          integration_id: chatIntegration,
          session_id: sessionId,
          metadata: { attachment_id: row.id, type: row.type, size_bytes: row.size_bytes, pages, added_by: ownerOf(principal) }
        })
        return new DocumentSummary({
          id: document.id,
          title: document.title,
          integration_id: document.integration_id,
          session_id: document.session_id,
          metadata: document.metadata,
          content_chars: document.content.length,
          chunk_count: document.chunk_count,
          created_at: document.created_at
        })
      })

    const list = (principal: PrincipalShape, sessionId: string) =>
      Effect.zipRight(sessions.own(principal, sessionId), documents.listForSession(sessionId))

    const remove = (principal: PrincipalShape, sessionId: string, documentId: string) =>
      Effect.gen(function*() {
        yield* sessions.own(principal, sessionId)
        const document = yield* documents.get(documentId)
        if (document.session_id !== sessionId) {
          return yield* new DocumentNotFound({ detail: `Document ${documentId} not found in this conversation` })
        }
        yield* documents.remove(documentId)
        return new DocumentDeleted({ id: documentId, deleted: true })
      })

    return traced("SessionDocuments", { add, list, remove } as const)
  }),
  dependencies: [Documents.Default, Sessions.Default, Attachments.Default]
}) {}
