/**
 * Retrieval's added latency per turn, at 10k and 100k chunks: `/chat` turns of a bot with retrieval
 * on (top_k 4: embed the message, hybrid search, the passages into the context, `rag_rerank`)
 * against the same turns of a bot with it off, interleaved, on one server whose fake LLM answers
 * at once. Each turn is a new session, so the history is the same for both.
 *
 *   npx tsx bench/retrieval.ts [pglite|postgres] [sizes=10000,100000] [turns=60]
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import * as AppConfig from "../src/config/AppConfig.ts"
import { DatabaseLive } from "../src/main.ts"
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { startServer } from "../test/support/server.ts"
import { fill, percentile, sentence } from "./corpus.ts"

const backend = (process.argv[2] ?? "postgres") as Backend
const sizes = (process.argv[3] ?? "10000,100000").split(",").map(Number)
const turns = Number(process.argv[4] ?? 60)

const db = await createTestDatabase(backend)
const llm = await startFakeLlm({ record: false, defaultReply: { text: "Answered." } })
const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-bench", DEFAULT_MODEL: "fake-model", LOG_LEVEL: "error" }
let server = await startServer({ backend, db, env })
const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" }

/** Fills the store with the server stopped (PGlite has one process's lock), then starts it again. */
const loadTo = async (from: number, size: number) => {
  await server.close()
  const config = new Map([
    ["DATA_DIR", db.dataDir],
    ["LOG_LEVEL", "warning"],
    ...(db.databaseUrl ? [["DATABASE_URL", db.databaseUrl] as const] : [])
  ])
  const runtime = ManagedRuntime.make(
    DatabaseLive.pipe(Layer.provide(AppConfig.layer), Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(config)))))
  )
  await runtime.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.zipRight(fill(from, size), sql.unsafe("ANALYZE document_chunks")))
  )
  await runtime.dispose()
  server = await startServer({ backend, db, env })
}
const post = async (path: string, body: unknown) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { ...headers, authorization: `Bearer ${server.apiKey}` },
    body: JSON.stringify(body)
  })
  if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
  return response.json()
}
await post("/api/v1/admin/bots", {
  id: "reader",
  name: "Reader",
  retrieval: { enabled: true, top_k: 4, notes_top_k: Number(process.env.NOTES ?? 2) }
})
await post("/api/v1/admin/bots", { id: "plain", name: "Plain" })

const median = (values: Array<number>) => percentile([...values].sort((a, b) => a - b), 0.5)
const timed = async (body: unknown) => {
  const started = performance.now()
  await post("/chat", body)
  return performance.now() - started
}

let have = 0
for (const size of sizes) {
  const loaded = performance.now()
  await loadTo(have, size)
  have = size
  // One document through the API: the store builds its vector index as it would in use.
  await post("/api/v1/documents", { title: "index", content: sentence(60), integration_id: "bench" })
  console.log(`${size} chunks loaded in ${((performance.now() - loaded) / 1000).toFixed(1)} s`)
  const on: Array<number> = []
  const off: Array<number> = []
  for (let i = 0; i < turns + 10; i++) {
    const message = sentence(4 + (i % 4), 1000)
    const a = await timed({ message, bot_id: "reader", client_id: `on-${size}-${i}` })
    const b = await timed({ message, bot_id: "plain", client_id: `off-${size}-${i}` })
    if (i >= 10) {
      on.push(a)
      off.push(b)
    }
  }
  const added = median(on) - median(off)
  console.log(
    `| ${backend} | ${size} | ${median(off).toFixed(1)} ms | ${median(on).toFixed(1)} ms | +${added.toFixed(1)} ms | ${
      (median(on) / median(off)).toFixed(2)
    }x |`
  )
}

await server.close()
await llm.close()
await db.drop()
process.exit(0)
