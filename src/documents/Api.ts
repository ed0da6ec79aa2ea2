import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BodyLimit } from "../contract/BodyLimit.ts"
import { detailBody } from "../contract/Errors.ts"
import { SessionNotFound } from "../sessions/Errors.ts"
import { DocumentNotFound, EmbeddingFailed } from "./Errors.ts"
import {
  Document,
  DocumentCreate,
  DocumentDeleted,
  DocumentListQuery,
  DocumentPage,
  DocumentPath,
  SearchQuery,
  SearchResult
} from "./Model.ts"

export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("create", "/documents")
      .setPayload(DocumentCreate)
      .addSuccess(Document, { status: 201 })
      .addError(detailBody(EmbeddingFailed))
      .annotate(BodyLimit, "files")
      .annotate(RequiredScope, "documents:write")
      .annotate(
        OpenApi.Description,
        "Store a document: it is split into overlapping chunks, embedded and indexed for full-text search in one transaction"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/documents")
      .setUrlParams(DocumentListQuery)
      .addSuccess(DocumentPage)
      .annotate(RequiredScope, "documents:read")
      .annotate(
        OpenApi.Description,
        "Documents, newest first, without their content (its length as `content_chars`); filter by integration_id; limit 1-500 (default 50) and offset (the answer's next_offset). A conversation's documents are listed to admins only (its owner lists them at /api/v1/sessions/{id}/documents)"
      )
  )
  // Declared before /documents/:id; the router prefers the static segment in any case.
  .add(
    HttpApiEndpoint.get("search", "/documents/search")
      .setUrlParams(SearchQuery)
      .addSuccess(Schema.Array(SearchResult))
      .addError(detailBody(SessionNotFound))
      .annotate(RequiredScope, "documents:read")
      .annotate(
        OpenApi.Description,
        "Documents matching `q`, best first: vector similarity fused with full-text search by reciprocal rank (`score`), with the cosine `similarity` and the best chunk as `snippet`. A conversation's documents (`session_id` set) are found only with `session_id` naming it (the caller's own conversation) or by an admin"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/documents/:id")
      .setPath(DocumentPath)
      .addSuccess(Document)
      .annotate(RequiredScope, "documents:read")
      .annotate(OpenApi.Description, "One document")
  )
  .add(
    HttpApiEndpoint.del("remove", "/documents/:id")
      .setPath(DocumentPath)
      .addSuccess(DocumentDeleted)
      .annotate(RequiredScope, "documents:write")
      .annotate(OpenApi.Description, "Delete a document with its chunks and embeddings")
  )
  .addError(detailBody(DocumentNotFound))
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(OpenApi.Title, "Documents")
{}
