/**
 * The document store: ingestion (chunk, embed, write in one transaction), lookup, deletion and
 * hybrid search (vector similarity fused with full text by reciprocal rank). The REST handlers and
 * the integration SDK both call this service, so they behave alike.
 */
import { Chunk, Effect, ParseResult, Schedule, Schema } from "effect"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { EmbeddingConfig } from "../embeddings/Config.ts"
import { Embedder, type EmbeddingError } from "../embeddings/Embedder.ts"
import { layer as EmbedderLive } from "../embeddings/Live.ts"
import { inSpan, traced } from "../telemetry/Spans.ts"
import { chunkText } from "./Chunking.ts"
import { DocumentNotFound, EmbeddingFailed } from "./Errors.ts"
import {
  DEFAULT_SEARCH_LIMIT,
  Document,
  DocumentCreate,
  DocumentDeleted,
  DocumentPage,
  type DocumentScope,
  DocumentSummary,
  MAX_SEARCH_LIMIT,
  type SearchInput,
  SearchQuery,
  SearchResult
} from "./Model.ts"
import { fuse, type VectorHit } from "./Ranking.ts"
import { type DocumentRow, DocumentsRepo, embeddingInput, MAX_INDEXED_DIMENSION } from "./Repo.ts"

/** Texts per embedding request: well under every provider's batch limit. */
const EMBED_BATCH = 64
/** Chunks re-embedded per step after a model change. */
const REEMBED_BATCH = 64

/** How many chunks each leg contributes before fusion: enough that a document's best chunk is seen. */
export const candidatesFor = (limit: number) => Math.max(50, limit * 5)

/**
 * Checks input the way the HTTP layer does, for callers that are not HTTP (the integration SDK):
 * the same rules, the same 422 shape, `loc` starting with the field.
 */
const validate = <A, I>(schema: Schema.Schema<A, I>, input: I) =>
  Schema.decodeUnknown(schema, { errors: "all" })(input).pipe(
    Effect.mapError(
      (error) =>
        new ValidationError({
          detail: ParseResult.ArrayFormatter.formatErrorSync(error).map(
            (issue) =>
              new ValidationIssue({
                loc: issue.path.map((part) => (typeof part === "symbol" ? String(part) : part)),
                msg: issue.message,
                type: issue._tag === "Missing" ? "missing" : "value_error"
              })
          )
        })
    )
  )

/** The search query as the SDK passes it: `limit` a number, not query-string text. */
const SearchArguments = Schema.Struct({
  ...SearchQuery.fields,
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_SEARCH_LIMIT)))
})

const toDocument = (row: DocumentRow) => new Document(row)

/** What the documents routes show a caller: every document (an admin), or only those of no conversation. */
export type Visibility = "all" | "unscoped"

export class Documents extends Effect.Service<Documents>()("cairn/Documents", {
  scoped: Effect.gen(function*() {
    const repo = yield* DocumentsRepo
    const embedder = yield* Embedder
    const config = yield* EmbeddingConfig

    const pgvector = yield* repo.hasPgvector.pipe(Effect.orDie)
    const useIndex = pgvector && config.vectorSearch === "auto"
    if (!pgvector) {
      yield* Effect.logWarning(
        "pgvector is not installed in this database: document vector search scans every chunk exactly " +
          "(correct, but slower on large stores). Install the extension to get the HNSW index."
      )
    } else if (!useIndex) {
      yield* Effect.logInfo("DOCUMENTS_VECTOR_SEARCH=exact: document vector search scans every chunk exactly")
    }

    // Dimensions whose index is known to exist: a cache only, CREATE INDEX IF NOT EXISTS is the truth.
    const indexed = new Set<number>()
    const ensureIndex = (dimension: number) =>
      !useIndex || dimension > MAX_INDEXED_DIMENSION || indexed.has(dimension)
        ? Effect.void
        : repo.ensureIndex(dimension).pipe(
          Effect.tap(() => Effect.sync(() => indexed.add(dimension))),
          // Two servers creating it at once: one wins, the other's error is harmless.
          Effect.catchAll((error) => Effect.logWarning(`Could not create the vector index for ${dimension} dimensions`, error))
        )

    const embedAll = (texts: ReadonlyArray<string>): Effect.Effect<Array<ReadonlyArray<number>>, EmbeddingError> =>
      Effect.forEach(Chunk.chunksOf(Chunk.fromIterable(texts), EMBED_BATCH), (batch) => embedder.embed(Chunk.toReadonlyArray(batch))).pipe(
        Effect.map((batches) => batches.flat())
      )

    const ingest = (unchecked: typeof DocumentCreate.Encoded) =>
      Effect.gen(function*() {
        const input = yield* validate(DocumentCreate, unchecked)
        const pieces = chunkText(input.content)
        const vectors = yield* embedAll(pieces.map((piece) => embeddingInput(input.title, piece))).pipe(
          Effect.mapError((error) => new EmbeddingFailed({ detail: `Embedding failed: ${error.message}` }))
        )
        yield* ensureIndex(vectors[0]!.length)
        const id = yield* repo.insert(
          {
            title: input.title,
            content: input.content,
            integrationId: input.integration_id,
            sessionId: input.session_id ?? null,
            metadata: input.metadata ?? {}
          },
          pieces.map((content, i) => ({ content, embedding: vectors[i]! })),
          embedder.model
        )
        const row = yield* repo.get(id)
        return toDocument(row!)
      })

    /** The document, when `visible` takes it in: a conversation's document is not found by those who see only unscoped ones. */
    const get = (id: string, visible: Visibility = "all") =>
      Effect.gen(function*() {
        const row = Schema.is(Schema.UUID)(id) ? yield* repo.get(id) : undefined
        if (!row || (visible === "unscoped" && row.session_id !== null)) {
          return yield* new DocumentNotFound({ detail: `Document ${id} not found` })
        }
        return toDocument(row)
      })

    const list = (
      query: { readonly integration_id?: string | undefined; readonly limit?: number | undefined; readonly offset?: number | undefined },
      visible: Visibility = "all"
    ) =>
      Effect.gen(function*() {
        const limit = query.limit ?? 50
        const offset = query.offset ?? 0
        const rows = yield* repo.list(query.integration_id, limit, offset, visible)
        return new DocumentPage({
          items: rows.slice(0, limit).map((row) => new DocumentSummary(row)),
          next_offset: rows.length > limit ? offset + limit : null
        })
      })

    const remove = (id: string, visible: Visibility = "all") =>
      Effect.gen(function*() {
        if (visible === "unscoped") yield* get(id, visible)
        const removed = Schema.is(Schema.UUID)(id) && (yield* repo.remove(id))
        if (!removed) return yield* new DocumentNotFound({ detail: `Document ${id} not found` })
        return new DocumentDeleted({ id, deleted: true })
      })

    const vectorLeg = (q: string, integrationId: string | undefined, candidates: number, scope: DocumentScope) =>
      embedder.embed([q]).pipe(
        Effect.flatMap(([query]): Effect.Effect<Array<VectorHit>, never> =>
          useIndex && query!.length <= MAX_INDEXED_DIMENSION
            ? Effect.zipRight(ensureIndex(query!.length), repo.vectorIndexed(query!, embedder.model, integrationId, candidates, scope))
            : repo.vectorExact(query!, embedder.model, integrationId, candidates, scope)
        ),
        // Without an embedder (provider down) full-text search still answers.
        Effect.catchTag("EmbeddingError", (error) =>
          Effect.as(Effect.logWarning(`Document search without vectors: ${error.message}`), [] as Array<VectorHit>))
      )

    const search = (unchecked: SearchInput) =>
      Effect.gen(function*() {
        const input = yield* validate(SearchArguments, unchecked)
        const limit = Math.min(input.limit ?? DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT)
        const candidates = candidatesFor(limit)
        const q = input.q.trim()
        // One after the other: PGlite has one connection anyway, and on PostgreSQL running them in
        // parallel measured slower (a second pooled connection per search) than in sequence.
        // Only documents of no conversation unless the caller names the scope (Model.ts `DocumentScope`).
        const scope = unchecked.scope ?? "unscoped"
        const vector = yield* vectorLeg(q, input.integration_id, candidates, scope)
        const text = yield* repo.text(q, input.integration_id, candidates, scope)
        const fused = fuse(vector, text, limit)
        const rows = new Map((yield* repo.getMany(fused.map((hit) => hit.documentId))).map((row) => [row.id, row]))
        return fused.flatMap((hit) => {
          const row = rows.get(hit.documentId)
          // Deleted between the search and the fetch: leave it out.
          if (!row) return []
          return [
            new SearchResult({
              id: row.id,
              title: row.title,
              content: row.content,
              integration_id: row.integration_id,
              session_id: row.session_id,
              metadata: row.metadata,
              created_at: row.created_at,
              score: hit.score,
              similarity: hit.similarity,
              snippet: hit.snippet
            })
          ]
        })
      })

    /** Brings every chunk to the current model, a batch at a time; searches meanwhile use full text for the rest. */
    const reembed = inSpan(
      Effect.gen(function*() {
        const pending = yield* repo.countPending(embedder.model)
        if (pending === 0) return
        yield* Effect.logInfo(`Re-embedding ${pending} document chunks with ${embedder.model}`)
        let done = 0
        for (;;) {
          const batch = yield* repo.pendingReembed(embedder.model, REEMBED_BATCH)
          if (batch.length === 0) break
          const vectors = yield* embedAll(batch.map((chunk) => embeddingInput(chunk.title, chunk.content)))
          yield* ensureIndex(vectors[0]!.length)
          yield* repo.updateEmbeddings(
            batch.map((chunk, i) => ({ documentId: chunk.document_id, ordinal: chunk.ordinal, embedding: vectors[i]! })),
            embedder.model
          )
          done += batch.length
        }
        yield* Effect.logInfo(`Re-embedded ${done} document chunks with ${embedder.model}`)
      }),
      "Documents.reembed"
    )

    yield* reembed.pipe(
      Effect.tapErrorCause((cause) => Effect.logWarning("Re-embedding documents failed; retrying", cause)),
      Effect.retry(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("5 minutes")))),
      Effect.catchAllCause(Effect.logError),
      Effect.forkScoped
    )

    /** The documents added to one conversation, oldest first (the caller checked it may see them). */
    const listForSession = (sessionId: string) =>
      Effect.map(repo.listForSession(sessionId), (rows) => rows.map((row) => new DocumentSummary(row)))

    return traced(
      "Documents",
      {
        ingest,
        get,
        list,
        listForSession,
        sessionHasDocuments: repo.hasSessionDocuments,
        remove,
        search,
        model: embedder.model,
        vectorIndex: useIndex
      } as const
    )
  }),
  dependencies: [DocumentsRepo.Default, EmbedderLive]
}) {}
