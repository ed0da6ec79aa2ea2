/**
 * Backup and restore of a database holding 10k messages and 10k document chunks (the synthetic
 * corpus of corpus.ts: 60-word chunks with their 100-d embeddings), on a running server.
 * - backup: POST /api/v1/admin/operations/backup until it is complete (dump in one snapshot, copy
 *   the data directory, tar and gzip), against the baseline of reading the same rows once
 *   (`SELECT row_to_json(t)` of every table, through the same client);
 * - restore: `restore()` into an empty database (schema, load, sequences), against the baseline of
 *   writing the same rows with the bulk INSERTs that filled the store; and `cairn restore` as a
 *   process, start included;
 * - size: the archive against the database's own size on disk.
 *
 *   npx tsx bench/backup.ts [pglite|postgres] [messages=10000] [chunks=10000]
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as AppConfig from "../src/config/AppConfig.ts"
import * as Database from "../src/db/Database.ts"
import { DatabaseLive } from "../src/main.ts"
import { restore } from "../src/operations/Restore.ts"
import { createTestDatabase, tempDir } from "../test/support/database.ts"
import { runCli, startServer } from "../test/support/server.ts"
import { fill, sentence } from "./corpus.ts"

const backend = (process.argv[2] ?? "pglite") as "pglite" | "postgres"
const messageCount = Number(process.argv[3] ?? 10_000)
const chunkCount = Number(process.argv[4] ?? 10_000)

const source = await createTestDatabase(backend)
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const configOf = (db: typeof source) =>
  ConfigProvider.fromMap(
    new Map([
      ["DATA_DIR", db.dataDir],
      ["LOG_LEVEL", "error"],
      ...(db.databaseUrl ? [["DATABASE_URL", db.databaseUrl] as [string, string]] : [])
    ])
  )

// The store, written with the server stopped (PGlite has one process's lock): sessions of 100
// messages each, then the corpus. Writing it is the restore's baseline, reading it the backup's.
const runtime = ManagedRuntime.make(
  DatabaseLive.pipe(Layer.provide(AppConfig.layer), Layer.provide(Layer.setConfigProvider(configOf(source))))
)
const writeStarted = performance.now()
await runtime.runPromise(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let s = 0; s * 100 < messageCount; s++) {
      const sessionId = crypto.randomUUID()
      yield* sql`INSERT INTO sessions (id, bot_id, client_id) VALUES (${sessionId}, 'default', ${`bench-${s}`})`
      const rows = Array.from(
        { length: Math.min(100, messageCount - s * 100) },
        (_, i) => `('${crypto.randomUUID()}', '${sessionId}', '${i % 2 === 0 ? "user" : "assistant"}', '${sentence(60)}')`
      )
      yield* sql.unsafe(`INSERT INTO messages (id, session_id, role, content) VALUES ${rows.join(",")}`)
    }
    yield* fill(0, chunkCount)
  })
)
const writeMs = performance.now() - writeStarted
const readStarted = performance.now()
const readRows = await runtime.runPromise(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* sql<{ name: string }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()`
    let rows = 0
    for (const { name } of tables) rows += (yield* sql.unsafe(`SELECT row_to_json(t)::text FROM "${name}" t`)).length
    return rows
  })
)
const readMs = performance.now() - readStarted
const databaseBytes = await runtime.runPromise(
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql<{ bytes: string }>`SELECT pg_database_size(current_database())::text AS bytes`, (rows) => Number(rows[0]!.bytes))
  )
)
await runtime.dispose()

const server = await startServer({ backend, db: source, env: { LOG_LEVEL: "error" } })
const headers = { authorization: `Bearer ${server.apiKey}` }
const backupStarted = performance.now()
const started = await (await fetch(`${server.baseUrl}/api/v1/admin/operations/backup`, { method: "POST", headers })).json() as {
  id: string
}
let backup: any
for (;;) {
  backup = await (await fetch(`${server.baseUrl}/api/v1/admin/operations/backup/${started.id}`, { headers })).json()
  if (backup.status !== "running") break
  await new Promise((resolve) => setTimeout(resolve, 20))
}
const backupMs = performance.now() - backupStarted
if (backup.status !== "complete") throw new Error(`The backup failed: ${backup.error}`)
const archive = path.join(tempDir("cairn-bench-archive-"), backup.file_name)
fs.writeFileSync(archive, Buffer.from(await (await fetch(`${server.baseUrl}${backup.download_url}`, { headers })).arrayBuffer()))
await server.close()
await source.drop()

const target = await createTestDatabase(backend)
const env = new Map([
  ["DATA_DIR", target.dataDir],
  ["LOG_LEVEL", "error"],
  ...(target.databaseUrl ? [["DATABASE_URL", target.databaseUrl] as [string, string]] : [])
])
const restoreStarted = performance.now()
const summary = await Effect.runPromise(
  Effect.scoped(restore(archive)).pipe(
    Effect.provide(Database.layer().pipe(Layer.provideMerge(AppConfig.layer))),
    Effect.withConfigProvider(ConfigProvider.fromMap(env))
  )
)
const restoreMs = performance.now() - restoreStarted
const cliTarget = await createTestDatabase(backend)
const cliStarted = performance.now()
const cli = await runCli(["restore", archive], {
  DATA_DIR: cliTarget.dataDir,
  LOG_LEVEL: "error",
  ...(cliTarget.databaseUrl ? { DATABASE_URL: cliTarget.databaseUrl } : {})
})
const cliMs = performance.now() - cliStarted
if (cli.code !== 0) throw new Error(`cairn restore failed: ${cli.output}`)
await target.drop()
await cliTarget.drop()

console.log(
  `backup and restore (${backend}): ${messageCount} messages, ${chunkCount} chunks, ${backup.rows_written} rows in ${backup.tables_total} tables`
)
console.log(
  `| ${backend} | read every row ${seconds(readMs)} (${readRows} rows) | backup ${seconds(backupMs)} | ${(backupMs / readMs).toFixed(2)}x |`
)
console.log(
  `| ${backend} | bulk write ${seconds(writeMs)} | restore ${seconds(restoreMs)} (${summary.rows} rows) | ${
    (restoreMs / writeMs).toFixed(2)
  }x | cairn restore ${seconds(cliMs)} |`
)
console.log(
  `| ${backend} | database ${mib(databaseBytes)} | archive ${mib(backup.size_bytes)} | ${(backup.size_bytes / databaseBytes).toFixed(2)}x |`
)
process.exit(0)
