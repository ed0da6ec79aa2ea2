/** Schemas of the documents domain: the create body, the stored document, search results. */
import { Schema } from "effect"
import { body, idPath, limitParam, queryParams } from "../contract/Params.ts"

const NonBlank = (max: number) =>
  Schema.String.pipe(
    Schema.filter((value) => value.trim().length > 0, { message: () => "Must not be blank" }),
    Schema.maxLength(max)
  )

/** Large enough for a long report; larger belongs in workspace files, not in one embedding job. */
export const MAX_CONTENT_CHARS = 1_000_000

export const DocumentCreate = body({
  title: NonBlank(1_000),
  content: NonBlank(MAX_CONTENT_CHARS),
  integration_id: NonBlank(200),
  session_id: Schema.optional(Schema.NullOr(Schema.UUID)),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type DocumentCreate = typeof DocumentCreate.Type

export class Document extends Schema.Class<Document>("Document")({
  id: Schema.UUID,
  title: Schema.String,
  content: Schema.String,
  integration_id: Schema.String,
  session_id: Schema.NullOr(Schema.UUID),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  chunk_count: Schema.Int,
  created_at: Schema.DateTimeUtc
}) {}

/** A document in a listing: what it is, without its content (which may be a megabyte). */
export class DocumentSummary extends Schema.Class<DocumentSummary>("DocumentSummary")({
  id: Schema.UUID,
  title: Schema.String,
  integration_id: Schema.String,
  session_id: Schema.NullOr(Schema.UUID),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The content's length in characters. */
  content_chars: Schema.Int,
  chunk_count: Schema.Int,
  created_at: Schema.DateTimeUtc
}) {}

export class DocumentPage extends Schema.Class<DocumentPage>("DocumentPage")({
  items: Schema.Array(DocumentSummary),
  /** The offset of the next page; null on the last. */
  next_offset: Schema.NullOr(Schema.Int)
}) {}

export const DocumentListQuery = queryParams({
  integration_id: Schema.optional(Schema.String),
  limit: limitParam(),
  offset: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 1_000_000)))
})

export class SearchResult extends Schema.Class<SearchResult>("DocumentSearchResult")({
  id: Schema.UUID,
  title: Schema.String,
  content: Schema.String,
  integration_id: Schema.String,
  session_id: Schema.NullOr(Schema.UUID),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.DateTimeUtc,
  /** Reciprocal-rank-fusion score of the vector and full-text rankings; higher is better. */
  score: Schema.Number,
  /** Cosine similarity of the best chunk to the query; null when only full text found it. */
  similarity: Schema.NullOr(Schema.Number),
  /** The best-matching chunk. */
  snippet: Schema.String
}) {}

export class DocumentDeleted extends Schema.Class<DocumentDeleted>("DocumentDeleted")({
  id: Schema.UUID,
  deleted: Schema.Literal(true)
}) {}

export const MAX_SEARCH_LIMIT = 100
export const DEFAULT_SEARCH_LIMIT = 10

export const SearchQuery = queryParams({
  q: NonBlank(2_000),
  integration_id: Schema.optional(Schema.String),
  /** Also the documents added to this conversation (one of the caller's own). */
  session_id: Schema.optional(Schema.UUID),
  limit: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, MAX_SEARCH_LIMIT))
  )
})

export const DocumentPath = idPath((id) => `Document ${id} not found`)

/**
 * Which documents a search or a listing sees. A document's `session_id` scopes it to that
 * conversation: `{ session }` sees that conversation's (and those of the conversations it was
 * branched from) beside the unscoped ones; `all` sees every document (an admin; a bot's own notes);
 * `unscoped`, the default, only documents of no conversation.
 */
export type DocumentScope = { readonly session: string } | "all" | "unscoped"

export interface SearchInput {
  readonly q: string
  readonly integration_id?: string | undefined
  readonly limit?: number | undefined
  readonly scope?: DocumentScope | undefined
}

/** The integration id of documents added to a conversation in the chat. */
export const chatIntegration = "chat"

/** `POST /api/v1/sessions/{id}/documents`: an uploaded file (PDF, text, Markdown) made a document of the conversation. */
export const SessionDocumentCreate = body({
  attachment_id: Schema.UUID,
  /** For a conversation not started yet (its id chosen by the client, as `/chat` takes it): its bot, default `default`. */
  bot_id: Schema.optional(Schema.String),
  client_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
})

export const SessionPath = idPath("Session")
export const SessionDocumentPath = idPath("Session", { document_id: Schema.UUID })
