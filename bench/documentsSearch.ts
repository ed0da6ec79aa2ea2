/**
 * Document search latency at 1k, 10k and 100k chunks, and ingestion throughput, on PGlite and
 * PostgreSQL. Chunks are generated on a fast path (synthetic text from the packaged vocabulary,
 * embedded in process, written with multi-row INSERTs), then searched through the real service:
 *
 *   hybrid   Documents.search (vector leg + full-text leg + fusion + fetch), as the API runs it
 *   vector   the vector leg alone through the HNSW index (where pgvector exists)
 *   exact    the vector leg alone by the exact scan (the baseline, and the path without pgvector)
 *   text     the full-text leg alone
 *
 *   npx tsx bench/documentsSearch.ts [--backend pglite|postgres|both] [--sizes 1000,10000,100000]
 *                                    [--queries 200] [--ingest 300]
 *
 * Target: hybrid p95 under 50 ms at 100k chunks where an index exists.
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import * as AppConfig from "../src/config/AppConfig.ts"
import { Documents } from "../src/documents/Documents.ts"
import { DocumentsRepo, MAX_INDEXED_DIMENSION } from "../src/documents/Repo.ts"
import * as EmbeddingConfig from "../src/embeddings/Config.ts"
import { Embedder } from "../src/embeddings/Embedder.ts"
import * as Glove from "../src/embeddings/Glove.ts"
import { DatabaseLive } from "../src/main.ts"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { fill, INTEGRATIONS, percentile, random, sentence, vectors } from "./corpus.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const BACKENDS: ReadonlyArray<Backend> = arg("backend", "both") === "both" ? ["pglite", "postgres"] : [arg("backend", "pglite") as Backend]
const SIZES = arg("sizes", "1000,10000,100000").split(",").map(Number)
const QUERIES = Number(arg("queries", "200"))
const INGEST = Number(arg("ingest", "300"))

const summarise = (samples: Array<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), n: sorted.length }
}

const runtimeFor = (dataDir: string, databaseUrl: string | undefined) => {
  const env = new Map<string, string>([["DATA_DIR", dataDir], ["LOG_LEVEL", "warning"]])
  if (databaseUrl) env.set("DATABASE_URL", databaseUrl)
  const EmbedderLive = Layer.succeed(Embedder, Glove.make()).pipe(Layer.provideMerge(EmbeddingConfig.layer))
  const layer = Documents.DefaultWithoutDependencies.pipe(
    Layer.provideMerge(DocumentsRepo.Default),
    Layer.provideMerge(EmbedderLive),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(env)))
  )
  return ManagedRuntime.make(layer)
}

const time = async (f: () => Promise<unknown>) => {
  const started = performance.now()
  await f()
  return performance.now() - started
}

/** Latency over the queries; odd-numbered ones filter by an integration holding a tenth of the chunks. */
const measure = async (run: (q: string, i: number) => Promise<unknown>, queries: ReadonlyArray<string>) => {
  for (const q of queries.slice(0, 10)) await run(q, 0) // warm-up
  const samples: Array<number> = []
  for (let i = 0; i < queries.length; i++) samples.push(await time(() => run(queries[i]!, i)))
  return {
    ...summarise(samples),
    unfiltered: summarise(samples.filter((_, i) => i % 2 === 0)),
    filtered: summarise(samples.filter((_, i) => i % 2 === 1))
  }
}

const fmt = (s: { p50: number; p95: number }) => `${s.p50.toFixed(1)} / ${s.p95.toFixed(1)}`
const rows: Array<string> = []

for (const backend of BACKENDS) {
  const db = await createTestDatabase(backend)
  const runtime = runtimeFor(db.dataDir, db.databaseUrl)
  try {
    const repo = await runtime.runPromise(DocumentsRepo)
    const documents = await runtime.runPromise(Documents)
    const pgvector = await runtime.runPromise(repo.hasPgvector)
    console.log(`\n== ${backend} (pgvector: ${pgvector ? "yes" : "no"})`)

    // Ingestion through the service (chunk, embed, one transaction per document), index present.
    if (pgvector) await runtime.runPromise(repo.ensureIndex(vectors.dimension))
    const ingestTexts = Array.from({ length: INGEST }, () => ({
      title: sentence(4, 500),
      content: Array.from({ length: 3 }, () => sentence(150)).join("\n\n")
    }))
    const ingestMs = await time(async () => {
      for (const text of ingestTexts) {
        await runtime.runPromise(documents.ingest({ ...text, integration_id: "ingest" }))
      }
    })
    const ingestChunks = await runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM document_chunks`)
    )
    const chunksIngested = ingestChunks[0]!.n
    console.log(
      `ingest: ${INGEST} documents (${chunksIngested} chunks) in ${(ingestMs / 1000).toFixed(1)} s = ` +
        `${((INGEST * 1000) / ingestMs).toFixed(1)} documents/s, ${((chunksIngested * 1000) / ingestMs).toFixed(0)} chunks/s`
    )
    rows.push(
      `| ${backend} | ingest | ${INGEST} docs, ${chunksIngested} chunks | ${((INGEST * 1000) / ingestMs).toFixed(1)} docs/s, ${
        ((chunksIngested * 1000) / ingestMs).toFixed(0)
      } chunks/s | | | | |`
    )
    // The bulk load is faster without the index; it is rebuilt after each load.
    await runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP INDEX IF EXISTS document_chunks_hnsw_${vectors.dimension}`))
    )

    const queries = Array.from({ length: QUERIES }, () => sentence(3 + Math.floor(random() * 3), 1000))
    let have = chunksIngested
    for (const size of SIZES) {
      // The bulk load is faster without the full-text index; it is rebuilt after each load.
      const loadMs = await time(() =>
        runtime.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.zipRight(
              sql.unsafe("DROP INDEX IF EXISTS document_chunks_search_idx"),
              Effect.zipRight(fill(have, size), sql.unsafe("CREATE INDEX document_chunks_search_idx ON document_chunks USING gin (search)"))
            ))
        )
      )
      have = Math.max(have, size)
      let indexMs = 0
      if (pgvector && vectors.dimension <= MAX_INDEXED_DIMENSION) {
        indexMs = await time(() =>
          runtime.runPromise(
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              Effect.zipRight(
                sql.unsafe(`DROP INDEX IF EXISTS document_chunks_hnsw_${vectors.dimension}`),
                sql.withTransaction(
                  Effect.zipRight(sql.unsafe("SET LOCAL maintenance_work_mem = '512MB'"), repo.ensureIndex(vectors.dimension))
                )
              ))
          )
        )
      }
      await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("ANALYZE document_chunks")))
      console.log(`${size} chunks: loaded in ${(loadMs / 1000).toFixed(1)} s, index built in ${(indexMs / 1000).toFixed(1)} s`)
      const embedded = queries.map((q) => Glove.embedText(vectors, q))
      const filter = (i: number) => (i % 2 === 0 ? undefined : `int-${i % INTEGRATIONS}`)
      const candidates = 50
      // The exact scan is the slow baseline: fewer samples on large stores keep the run short.
      const exactQueries = size >= 100_000 ? queries.slice(0, 30) : size >= 10_000 ? queries.slice(0, 60) : queries
      const hybrid = await measure(
        (q, i) => runtime.runPromise(documents.search({ q, integration_id: filter(i), limit: 10 })),
        pgvector ? queries : exactQueries
      )
      const text = await measure((q, i) => runtime.runPromise(repo.text(q, filter(i), candidates)), queries)
      const exact = await measure(
        (_q, i) => runtime.runPromise(repo.vectorExact(embedded[i]!, Glove.GLOVE_MODEL, filter(i), candidates)),
        exactQueries
      )
      const vector = pgvector
        ? await measure((_q, i) => runtime.runPromise(repo.vectorIndexed(embedded[i]!, Glove.GLOVE_MODEL, filter(i), candidates)), queries)
        : undefined
      if (pgvector && size === SIZES.at(-1)) {
        const plan = await runtime.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql.withTransaction(
              Effect.zipRight(
                sql`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)`,
                sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT document_id FROM document_chunks c
                  WHERE c.dimension = 100 AND c.embedding_model = ${Glove.GLOVE_MODEL} AND c.integration_id = 'int-3'
                  ORDER BY c.embedding::vector(100) <=> ${`[${embedded[0]!.join(",")}]`}::vector(100) LIMIT 50`
              )
            ))
        )
        console.log("plan of the filtered vector query:\n  " + plan.map((row) => row["QUERY PLAN"]).join("\n  "))
      }
      const line = `| ${backend} | search | ${size} chunks | hybrid ${fmt(hybrid)} | vector (HNSW) ${vector ? fmt(vector) : "n/a"} | ` +
        `exact ${fmt(exact)} | text ${fmt(text)} | hybrid p95 / exact p95 = ${(hybrid.p95 / exact.p95).toFixed(3)} | ` +
        `hybrid unfiltered ${fmt(hybrid.unfiltered)}, filtered ${fmt(hybrid.filtered)} |`
      console.log(line)
      rows.push(line)
    }
  } finally {
    await runtime.dispose()
    await db.drop()
  }
}

console.log("\n| backend | what | size | p50 / p95 ms (or rate) | | | | |\n|---|---|---|---|---|---|---|---|")
for (const row of rows) console.log(row)
