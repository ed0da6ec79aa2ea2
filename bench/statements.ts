/**
 * What one chat turn costs PostgreSQL in statements: a fresh database with `log_statement = all`,
 * `cairn serve` against the fake LLM, a few warm-up turns, then N sequential turns of one client
 * (blocking or streaming); the server log's statements in that window are grouped by their text
 * (parameters aside) and counted per turn. With `--durations`, PostgreSQL logs each statement's
 * execution time too (`log_min_duration_statement = 0`), and each group shows its time per turn
 * and per call: which statement costs the database what.
 *
 *   npx tsx bench/statements.ts [--turns 20] [--mode blocking|streaming] [--durations] [--log /var/log/postgresql/postgresql-15-main.log]
 */
import * as fs from "node:fs"
import pg from "pg"
import { createTestDatabase } from "../test/support/database.ts"
import { API_KEY, spawnServer } from "../test/support/server.ts"
import { startFakeLlmProcess } from "./children.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const TURNS = Number(arg("turns", "20"))
const MODE = arg("mode", "blocking")
const LOG = arg("log", "/var/log/postgresql/postgresql-15-main.log")
const DURATIONS = process.argv.includes("--durations")
const PROVIDER_KEY = "sk-bench-provider-key-0123456789"

const fake = await startFakeLlmProcess({ delayMs: "5", reply: "The quick brown fox jumps over the lazy dog.", apiKey: PROVIDER_KEY })
const db = await createTestDatabase("postgres")
const name = new URL(db.databaseUrl!).pathname.slice(1)
const admin = new pg.Client({ connectionString: db.databaseUrl })
await admin.connect()
await admin.query(
  DURATIONS ? `ALTER DATABASE ${name} SET log_min_duration_statement = 0` : `ALTER DATABASE ${name} SET log_statement = 'all'`
)
await admin.end()
const server = await spawnServer(db, {
  OPENAI_BASE_URL: `${fake.url}/v1`,
  OPENAI_API_KEY: PROVIDER_KEY,
  DEFAULT_MODEL: "fake-model",
  LOG_LEVEL: "warning"
})
const turn = async (n: number) => {
  const response = await fetch(`${server.baseUrl}/chat${MODE === "streaming" ? "/stream" : ""}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ message: `turn ${n}`, client_id: "statements" })
  })
  await response.text()
}
try {
  for (let n = 0; n < 5; n++) await turn(n)
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const start = fs.statSync(LOG).size
  for (let n = 0; n < TURNS; n++) await turn(n)
  // The batched writers (events, spans, usage) flush within a second.
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const text = fs.readFileSync(LOG, "utf8").slice(start)
  const groups = new Map<string, { count: number; ms: number }>()
  let total = 0
  // `log_statement` lines read "statement: …" or "execute <name>: …"; `log_min_duration_statement`
  // puts "duration: N ms  " before them, and logs the extended protocol's parse and bind steps as
  // lines of their own (their time is added to the statement's, not counted as a statement).
  for (
    const match of text.matchAll(
      /\[\d+\] \S+@(\S+) LOG: {2}(?:duration: ([\d.]+) ms {2})?(statement|execute|parse|bind)[^:]*: ([\s\S]*?)(?=\n\d{4}-\d\d-\d\d |\n?$)/g
    )
  ) {
    if (match[1] !== name) continue
    const statement = match[4]!.replace(/\s+/g, " ").slice(0, 110)
    const group = groups.get(statement) ?? { count: 0, ms: 0 }
    const counted = match[3] === "statement" || match[3] === "execute"
    if (counted) group.count++
    group.ms += Number(match[2] ?? 0)
    groups.set(statement, group)
    if (counted) total++
  }
  console.log(`${MODE}: ${total} statements in ${TURNS} turns, ${(total / TURNS).toFixed(1)} per turn (1.5 s idle after included)`)
  if (DURATIONS) console.log("per turn | ms per turn | ms per call | statement")
  for (const [statement, { count, ms }] of [...groups].sort((a, b) => (DURATIONS ? b[1].ms - a[1].ms : b[1].count - a[1].count))) {
    const perTurn = (count / TURNS).toFixed(2).padStart(6)
    console.log(
      DURATIONS
        ? `${perTurn} | ${(ms / TURNS).toFixed(3).padStart(7)} | ${(ms / count).toFixed(3).padStart(7)} | ${statement}`
        : `${perTurn}  ${statement}`
    )
  }
} finally {
  await server.stop("SIGTERM")
  await db.drop()
  fake.child.kill("SIGTERM")
}
