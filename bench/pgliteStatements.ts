/**
 * What a statement with parameters costs PGlite through `PGlite.query` (parse, describe, bind,
 * describe, execute, sync: six calls into its WebAssembly, the statement parsed and planned each
 * time) and through `db/PgliteClient.ts`'s prepared statements (prepared once, then one call), on
 * one in-memory PGlite: a turn's kind of work, a message insert that touches its session and a read
 * of the session's newest messages, in interleaved rounds. CPU of the process per pair. As the
 * server does, grown tables are analyzed (db/PgliteAnalyze.ts), here every 500 pairs, and that
 * time is counted; `--analyze no` leaves them without statistics.
 *
 *   npx tsx bench/pgliteStatements.ts [--pairs 3000] [--rounds 5] [--plan-cache-mode auto|force_custom_plan] [--analyze yes|no]
 */
import { PGlite } from "@electric-sql/pglite"
import { randomUUID } from "node:crypto"
import { analyzeSql, grownTablesSql } from "../src/db/PgliteAnalyze.ts"
import { planCacheMode, preparedStatements } from "../src/db/PgliteClient.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const PAIRS = Number(arg("pairs", "3000"))
const ROUNDS = Number(arg("rounds", "5"))
const ANALYZE = arg("analyze", "yes") === "yes"

// As db/PgliteClient.ts sets it; `--plan-cache-mode force_custom_plan` is what it set before its tables were analyzed.
const db = await PGlite.create("memory://", {
  startParams: [...PGlite.defaultStartParams, "-c", `plan_cache_mode=${arg("plan-cache-mode", planCacheMode)}`]
})
await db.exec(`CREATE TABLE sessions (id uuid PRIMARY KEY, title text, updated_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE messages (id uuid PRIMARY KEY, session_id uuid NOT NULL REFERENCES sessions (id), seq bigserial, role text NOT NULL,
    content text, metadata jsonb NOT NULL DEFAULT '{}', created_at timestamptz NOT NULL DEFAULT clock_timestamp());
  CREATE INDEX ON messages (session_id, seq);`)
const session = randomUUID()
await db.query("INSERT INTO sessions (id) VALUES ($1)", [session])
const insert =
  `WITH inserted AS (INSERT INTO messages (id, session_id, role, content, metadata) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING created_at),
  touched AS (UPDATE sessions SET updated_at = now(), title = COALESCE(title, $6) WHERE id = $2) SELECT created_at FROM inserted`
const read = `SELECT m.seq::int AS seq, m.role, m.content, m.metadata FROM messages m WHERE m.session_id = $1 ORDER BY m.seq DESC LIMIT 10`

type Run = (sql: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<unknown>>
const paths: Record<string, Run> = {
  "PGlite.query": async (sql, params) => (await db.query(sql, params as Array<unknown>)).rows,
  "prepared (PgliteClient)": preparedStatements(db)
}
const cpuPerPair = async (run: Run) => {
  const started = process.cpuUsage()
  for (let n = 0; n < PAIRS; n++) {
    await run(insert, [randomUUID(), session, "user", `message ${n}`, JSON.stringify({ n }), "a title"])
    await run(read, [session])
    if (ANALYZE && n % 500 === 499) {
      const grown = (await db.query<{ name: string; columns: string | null }>(grownTablesSql)).rows
      if (grown.length > 0) await db.exec(analyzeSql(grown))
    }
  }
  const used = process.cpuUsage(started)
  return (used.user + used.system) / 1000 / PAIRS
}

const same =
  JSON.stringify(await paths["PGlite.query"]!(read, [session])) === JSON.stringify(await paths["prepared (PgliteClient)"]!(read, [session]))
if (!same) throw new Error("The two paths answered differently")
await cpuPerPair(paths["PGlite.query"]!)
await cpuPerPair(paths["prepared (PgliteClient)"]!)
const results = new Map<string, Array<number>>(Object.keys(paths).map((name) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? Object.keys(paths) : Object.keys(paths).reverse()
  for (const name of order) results.get(name)!.push(await cpuPerPair(paths[name]!))
}
const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const baseline = median(results.get("PGlite.query")!)
console.log(
  `${PAIRS} pairs (an insert touching its session, a read of 10 rows) per round, ${ROUNDS} rounds, median CPU per pair, plan_cache_mode ${
    arg("plan-cache-mode", planCacheMode)
  }, analyzed: ${ANALYZE ? "yes" : "no"}`
)
console.log("| path | ms per pair | rounds | ratio |")
console.log("|---|---|---|---|")
for (const [name, values] of results) {
  console.log(
    `| ${name} | ${median(values).toFixed(3)} | ${values.map((value) => value.toFixed(3)).join(", ")} | ${
      (median(values) / baseline).toFixed(2)
    } |`
  )
}
await db.close()
