/**
 * Documents in the chat: `/api/v1/sessions/{id}/documents`, an uploaded file made a document of
 * the conversation (`SessionDocuments.ts`), listed and removed by the conversation's owner.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AttachmentNotFound } from "../attachments/Errors.ts"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { detailBody } from "../contract/Errors.ts"
import { DocumentNotFound, DocumentTooLarge, EmbeddingFailed, UnsupportedDocument } from "../documents/Errors.ts"
import { DocumentDeleted, DocumentSummary, SessionDocumentCreate, SessionDocumentPath, SessionPath } from "../documents/Model.ts"
import { SessionNotFound } from "../sessions/Errors.ts"

export class SessionDocumentsApi extends HttpApiGroup.make("sessionDocuments")
  .add(
    HttpApiEndpoint.post("add", "/api/v1/sessions/:id/documents")
      .setPath(SessionPath)
      .setPayload(SessionDocumentCreate)
      .addSuccess(DocumentSummary, { status: 201 })
      .addError(detailBody(EmbeddingFailed))
      .addError(detailBody(UnsupportedDocument))
      .addError(detailBody(DocumentTooLarge))
      .addError(detailBody(AttachmentNotFound))
      .addError(detailBody(SessionNotFound))
      .addError(detailBody(BotNotFound))
      .annotate(RequiredScope, "chat")
      .annotate(
        OpenApi.Description,
        "Documents in the chat: an uploaded file (`attachment_id`, from POST /api/v1/attachments/upload: a PDF with text, or UTF-8 text such as Markdown) made a document of the conversation (`session_id`, integration `chat`); retrieval in that conversation's turns finds it, no other conversation's and no other user's search does. Only the conversation's owner adds (403 otherwise); a conversation not started yet is created (`bot_id`, `client_id`, as /chat does). 415 for a file with no text, 413 past the document size"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/sessions/:id/documents")
      .setPath(SessionPath)
      .addSuccess(Schema.Array(DocumentSummary))
      .addError(detailBody(SessionNotFound))
      .annotate(RequiredScope, "chat")
      .annotate(OpenApi.Description, "The documents added to the conversation, oldest first (its owner only)")
  )
  .add(
    HttpApiEndpoint.del("remove", "/api/v1/sessions/:id/documents/:document_id")
      .setPath(SessionDocumentPath)
      .addSuccess(DocumentDeleted)
      .addError(detailBody(SessionNotFound))
      .annotate(RequiredScope, "chat")
      .annotate(OpenApi.Description, "Remove a document from the conversation (its owner only): it is deleted with its chunks")
  )
  .addError(detailBody(DocumentNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Documents in the chat")
{}
