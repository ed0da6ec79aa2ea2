/** SQL for documents and their chunks: storage, the two search legs and re-embedding. */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Schema } from "effect"
import { CountRow, decodeRows, firstRow, IdRow, repository } from "../db/Repository.ts"
import { toPgArray, toPgVector } from "../embeddings/Vector.ts"
import { Document, type DocumentScope, DocumentSummary } from "./Model.ts"
import type { ChunkHit, VectorHit } from "./Ranking.ts"

/**
 * A document as stored: the API's `Document` as the driver hands it over (its type side), its
 * `timestamptz` read as a `Date` and made the model's `DateTime`.
 */
export const DocumentRow = Schema.Struct(Document.fields).pipe(
  Schema.omit("created_at"),
  Schema.typeSchema,
  Schema.extend(Schema.Struct({ created_at: Schema.DateTimeUtcFromDate }))
)
export type DocumentRow = typeof DocumentRow.Type

/** A document in a list (`DocumentSummary`): its content's length, not its content. */
export const DocumentSummaryRow = Schema.Struct(DocumentSummary.fields).pipe(
  Schema.omit("created_at"),
  Schema.typeSchema,
  Schema.extend(Schema.Struct({ created_at: Schema.DateTimeUtcFromDate }))
)

export interface NewDocument {
  readonly title: string
  readonly content: string
  readonly integrationId: string
  readonly sessionId: string | null
  readonly metadata: Readonly<Record<string, unknown>>
}

export interface NewChunk {
  readonly content: string
  readonly embedding: ReadonlyArray<number>
}

export const PendingChunk = Schema.Struct({
  document_id: Schema.String,
  ordinal: Schema.Number,
  title: Schema.String,
  content: Schema.String
})
export type PendingChunk = typeof PendingChunk.Type

const chunkFields = { document_id: Schema.String, ordinal: Schema.Number, content: Schema.String }
const ChunkRow = Schema.Struct(chunkFields)
/** A similarity is a float4/float8 expression: a number from PGlite, and from pg (node-postgres) too. */
const ScoredChunkRow = Schema.Struct({ ...chunkFields, similarity: Schema.Union(Schema.Number, Schema.NumberFromString) })
const Installed = Schema.Struct({ installed: Schema.Boolean })

/** pgvector's HNSW index takes up to 2000 dimensions; larger vectors are searched exactly. */
export const MAX_INDEXED_DIMENSION = 2000

/** Chunk rows per INSERT: nine parameters each, far below PostgreSQL's 65535. */
const INSERT_ROWS = 500

/** The text embedded for a chunk: its title gives a short chunk its context. */
export const embeddingInput = (title: string, chunk: string): string => `${title}\n${chunk}`

export class DocumentsRepo extends Effect.Service<DocumentsRepo>()("cairn/DocumentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Dimensions are integers we computed, never input; the typmod has to be a literal anyway.
    const dim = (dimension: number) => sql.literal(String(Math.trunc(dimension)))
    const inIntegration = (integrationId: string | undefined): Fragment =>
      integrationId === undefined ? sql.literal("") : sql`AND c.integration_id = ${integrationId}`

    /**
     * The chunks a scope sees (Model.ts `DocumentScope`): a document of another conversation is
     * left out. The conversations a session was branched from are its own (`forked_from`, up).
     */
    const inScope = (scope: DocumentScope): Fragment =>
      scope === "all"
        ? sql.literal("")
        : scope === "unscoped"
        ? sql`AND c.document_id NOT IN (SELECT o.id FROM documents o WHERE o.session_id IS NOT NULL)`
        : sql`AND c.document_id NOT IN (
                SELECT o.id FROM documents o
                WHERE o.session_id IS NOT NULL AND o.session_id NOT IN (${lineage(scope.session)}))`
    /** The session and those it was branched from, up to its first. */
    const lineage = (sessionId: string): Fragment =>
      sql`WITH RECURSIVE up AS (
            SELECT ${sessionId}::uuid AS id, 0 AS depth
            UNION ALL
            SELECT s.forked_from, up.depth + 1 FROM sessions s JOIN up ON s.id = up.id
            WHERE s.forked_from IS NOT NULL AND up.depth < 1000
          )
          SELECT id FROM up`
    /** Documents a listing sees: every one, or those of no conversation. */
    const listed = (scope: "all" | "unscoped"): Fragment => (scope === "all" ? sql.literal("TRUE") : sql`d.session_id IS NULL`)

    const documentColumns = sql.literal(
      "d.id, d.integration_id, d.session_id, d.title, d.content, d.metadata, d.created_at, " +
        "(SELECT count(*)::int FROM document_chunks k WHERE k.document_id = d.id) AS chunk_count"
    )

    const summaryColumns = sql.literal(
      "d.id, d.integration_id, d.session_id, d.title, d.metadata, d.created_at, char_length(d.content)::int AS content_chars, " +
        "(SELECT count(*)::int FROM document_chunks k WHERE k.document_id = d.id) AS chunk_count"
    )

    return repository("DocumentsRepo", {
      /** Whether the pgvector extension is installed in this database. */
      hasPgvector: sql`
        SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed`.pipe(
        decodeRows(Installed),
        Effect.map((rows) => rows[0]?.installed === true)
      ),

      /** The HNSW cosine index for one dimension (a partial expression index over the real[] column). */
      ensureIndex: (dimension: number) =>
        sql`CREATE INDEX IF NOT EXISTS ${sql.literal(`document_chunks_hnsw_${Math.trunc(dimension)}`)}
            ON document_chunks USING hnsw ((embedding::vector(${dim(dimension)})) vector_cosine_ops)
            WHERE dimension = ${dim(dimension)}`.pipe(Effect.asVoid),

      /** The document, its chunks and their embeddings, in one transaction. */
      insert: (document: NewDocument, chunks: ReadonlyArray<NewChunk>, model: string) =>
        sql.withTransaction(
          Effect.gen(function*() {
            const [row] = yield* decodeRows(IdRow)(sql`
              INSERT INTO documents (integration_id, session_id, title, content, metadata)
              VALUES (${document.integrationId}, ${document.sessionId}, ${document.title}, ${document.content},
                      ${JSON.stringify(document.metadata)}::jsonb)
              RETURNING id`)
            const id = row!.id
            const rows = chunks.map(
              (chunk, ordinal) =>
                sql`(${id}, ${ordinal}, ${document.integrationId}, ${chunk.content},
                     setweight(to_tsvector('english', ${document.title}), 'A') || to_tsvector('english', ${chunk.content}),
                     ${toPgArray(chunk.embedding)}::real[], ${model}, ${chunk.embedding.length})`
            )
            // Multi-row statements (round trips dominate on PGlite), within the parameter limit.
            for (let start = 0; start < rows.length; start += INSERT_ROWS) {
              yield* sql`INSERT INTO document_chunks
                  (document_id, ordinal, integration_id, content, search, embedding, embedding_model, dimension)
                  VALUES ${sql.join(",", false)(rows.slice(start, start + INSERT_ROWS))}`
            }
            return id
          })
        ),

      get: (id: string) =>
        sql`SELECT ${documentColumns} FROM documents d WHERE d.id = ${id}`.pipe(decodeRows(DocumentRow), Effect.map(firstRow)),

      getMany: (ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.succeed([] as ReadonlyArray<DocumentRow>)
          : sql`SELECT ${documentColumns} FROM documents d WHERE d.id IN ${sql.in(ids)}`.pipe(decodeRows(DocumentRow)),

      /** Deletes the document; its chunks and embeddings go with it (ON DELETE CASCADE). */
      /** A page of documents, newest first, without their content; one row more than asked tells whether another page follows. */
      list: (integrationId: string | undefined, limit: number, offset: number, scope: "all" | "unscoped" = "all") =>
        sql`SELECT ${summaryColumns}
            FROM documents d
            WHERE ${listed(scope)} ${integrationId === undefined ? sql.literal("") : sql`AND d.integration_id = ${integrationId}`}
            ORDER BY d.created_at DESC, d.id DESC
            LIMIT ${limit + 1} OFFSET ${offset}`.pipe(decodeRows(DocumentSummaryRow)),
      /** Whether the conversation (or one it was branched from) has documents of its own. */
      hasSessionDocuments: (sessionId: string) =>
        sql`SELECT EXISTS (SELECT 1 FROM documents d WHERE d.session_id IN (${lineage(sessionId)})) AS installed`.pipe(
          decodeRows(Installed),
          Effect.map((rows) => rows[0]?.installed === true)
        ),
      /** The documents added to one conversation, oldest first. */
      listForSession: (sessionId: string) =>
        sql`SELECT ${summaryColumns} FROM documents d WHERE d.session_id = ${sessionId}
            ORDER BY d.created_at, d.id`.pipe(decodeRows(DocumentSummaryRow)),
      remove: (id: string) => sql`DELETE FROM documents WHERE id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),

      /** Nearest chunks through the HNSW index of this dimension. */
      vectorIndexed: (
        query: ReadonlyArray<number>,
        model: string,
        integrationId: string | undefined,
        limit: number,
        scope: DocumentScope = "all"
      ) => {
        const d = dim(query.length)
        const literal = toPgVector(query)
        return sql.withTransaction(
          Effect.gen(function*() {
            // A filter (integration, model) is applied after the index scan; the iterative scan keeps
            // going until enough rows pass it instead of returning fewer than asked.
            // SET LOCAL, both in one round trip.
            yield* sql`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
                              set_config('hnsw.ef_search', ${String(Math.min(1000, Math.max(40, limit)))}, true)`
            return yield* decodeRows(ScoredChunkRow)(sql`
              SELECT c.document_id, c.ordinal, c.content,
                     1 - (c.embedding::vector(${d}) <=> ${literal}::vector(${d})) AS similarity
              FROM document_chunks c
              WHERE c.dimension = ${d} AND c.embedding_model = ${model} ${inIntegration(integrationId)} ${inScope(scope)}
              ORDER BY c.embedding::vector(${d}) <=> ${literal}::vector(${d})
              LIMIT ${limit}`)
          })
        ).pipe(Effect.map(toVectorHits))
      },

      /** Nearest chunks by a full scan, no extension needed: vectors are unit length, so cosine = dot. */
      vectorExact: (
        query: ReadonlyArray<number>,
        model: string,
        integrationId: string | undefined,
        limit: number,
        scope: DocumentScope = "all"
      ) =>
        sql`
          SELECT c.document_id, c.ordinal, c.content,
                 (SELECT sum(a * b) FROM unnest(c.embedding, ${toPgArray(query)}::real[]) AS t(a, b)) AS similarity
          FROM document_chunks c
          WHERE c.dimension = ${query.length} AND c.embedding_model = ${model} ${inIntegration(integrationId)} ${inScope(scope)}
          ORDER BY similarity DESC
          LIMIT ${limit}`.pipe(decodeRows(ScoredChunkRow), Effect.map(toVectorHits)),

      /**
       * Chunks containing every word of the query (web-search syntax: "a phrase", or, -word), best
       * first. All words, not any: without IDF weights a match on one everyday word is noise, and
       * the vector leg already ranks loose matches; this leg is for names, codes and exact terms.
       */
      text: (q: string, integrationId: string | undefined, limit: number, scope: DocumentScope = "all") =>
        sql`
          SELECT c.document_id, c.ordinal, c.content
          FROM document_chunks c, (SELECT websearch_to_tsquery('english', ${q}) AS query) q
          WHERE c.search @@ q.query ${inIntegration(integrationId)} ${inScope(scope)}
          ORDER BY ts_rank(c.search, q.query, 1) DESC, c.document_id, c.ordinal
          LIMIT ${limit}`.pipe(
          decodeRows(ChunkRow),
          Effect.map((rows): Array<ChunkHit> =>
            rows.map((row) => ({ documentId: row.document_id, ordinal: row.ordinal, content: row.content }))
          )
        ),

      /** Chunks whose vector another model made (or that have none yet), oldest documents first. */
      pendingReembed: (model: string, limit: number) =>
        sql`
          SELECT c.document_id, c.ordinal, d.title, c.content
          FROM document_chunks c JOIN documents d ON d.id = c.document_id
          WHERE c.embedding_model <> ${model}
          ORDER BY d.created_at, c.document_id, c.ordinal
          LIMIT ${limit}`.pipe(decodeRows(PendingChunk)),

      countPending: (model: string) =>
        sql`SELECT count(*)::int AS n FROM document_chunks WHERE embedding_model <> ${model}`.pipe(
          decodeRows(CountRow),
          Effect.map((rows) => rows[0]?.n ?? 0)
        ),

      updateEmbeddings: (
        updates: ReadonlyArray<{ readonly documentId: string; readonly ordinal: number; readonly embedding: ReadonlyArray<number> }>,
        model: string
      ) =>
        sql.withTransaction(
          Effect.forEach(
            updates,
            (update) =>
              sql`UPDATE document_chunks
                  SET embedding = ${toPgArray(update.embedding)}::real[], embedding_model = ${model},
                      dimension = ${update.embedding.length}
                  WHERE document_id = ${update.documentId} AND ordinal = ${update.ordinal}`,
            { discard: true }
          )
        )
    })
  })
}) {}

const toVectorHits = (rows: ReadonlyArray<typeof ScoredChunkRow.Type>): Array<VectorHit> =>
  rows
    .map((row) => ({
      documentId: row.document_id,
      ordinal: row.ordinal,
      content: row.content,
      similarity: row.similarity
    }))
    // The iterative scan's relaxed order may return neighbours slightly out of order.
    .sort((a, b) => b.similarity - a.similarity)
