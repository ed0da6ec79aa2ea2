/**
 * Turns side by side (issue 27, item 6): the same load against the fake LLM called direct (the
 * baseline: what a client gets straight from the provider), then against Cairn on PGlite and on
 * PostgreSQL, each cell blocking (`POST /chat`) and streaming (`POST /chat/stream`) with C
 * keep-alive clients, each client its own session sending turn after turn.
 *
 *   npx tsx bench/turns.ts [--turns 3000] [--concurrency 50] [--delay-ms 50] [--backends pglite,postgres]
 *                          [--modes blocking,streaming] [--direct yes|no]
 *                          [--profile DIR]   # each Cairn server under node --cpu-prof, profiles in DIR
 *                          [--node-args "--max-semi-space-size=32"]   # flags for the server's node
 *                          [--reply "many words"] [--chunk-delay-ms 2]   # the fake's answer, one chunk per word, paced
 *                          [--before <checkout with dist/ built>] [--rounds 2]   # before and after in turn, same run
 *                          [--warmup 6000]   # turns each cell runs before it is measured
 *
 * Processes: the fake LLM and `cairn serve` are children of this one, so their CPU is read apart
 * from the client's, from /proc/<pid>/stat; on PostgreSQL the CPU of the server's backends (the
 * rows of pg_stat_activity for the bench's database) is added as its own column. All clients use
 * the static key, so the bench raises RUNS_PER_CREDENTIAL_MAX to the concurrency (its default, 16,
 * would answer the other 34 with 429). Reports turns/s, latency p50/p95/p99, CPU per turn, and
 * the server's RSS idle (before the cell), peak (sampled every 100 ms) and after (5 s after it, and
 * `--late-after` seconds after it).
 */
import { spawnSync } from "node:child_process"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { API_KEY, spawnServer } from "../test/support/server.ts"
import { startFakeLlmProcess } from "./children.ts"
import { cpuMs, loadAverage, rssMb } from "./proc.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const TURNS = Number(arg("turns", "3000"))
const CONCURRENCY = Number(arg("concurrency", "50"))
const DELAY_MS = arg("delay-ms", "50")
const BACKENDS = arg("backends", "pglite,postgres").split(",") as Array<Backend>
const PROFILE_DIR = arg("profile", "")
/** Which Cairn cells to run (a profile of one mode alone: `--modes streaming`). */
const MODES = arg("modes", "blocking,streaming").split(",")
const DIRECT = arg("direct", "yes") === "yes"
/**
 * Another checkout (compiled: its dist/ built) run beside this one, cell by cell, `ROUNDS` times in
 * turn: before, after, before, after. These machines drift by 10% between runs; interleaving the
 * two puts both under the same drift.
 */
const BEFORE = arg("before", "")
const ROUNDS = Number(arg("rounds", BEFORE ? "2" : "1"))
/** Flags for the server's node (a V8 heap setting to compare, say), space-separated. */
const NODE_ARGS = arg("node-args", "").split(" ").filter(Boolean)
/**
 * Turns each cell runs before it is measured. V8 goes on optimizing the server's functions for
 * its first few thousand turns, on its helper threads (`--trace-opt` on a PostgreSQL server at 50
 * concurrent: 363 functions optimized in turns 600–2,600, 59 in 3,000–5,000, 9 in 8,000–10,000):
 * work a long-running server does once. The default measures the steady state after it;
 * `--warmup 300` is what sections of bench/README.md before 2026-11-27 measured.
 */
const WARMUP_TURNS = Number(arg("warmup", "6000"))
const AFTER_MS = 5000
/**
 * A second reading of the server's RSS this many seconds after the cell (`--late-after 45`; none by
 * default): 5 s after, V8 still holds what the load left, which it gives back once the server has
 * been quiet a while (lifecycle/QuietCollection.ts, then V8's memory reducer).
 */
const LATE_AFTER_MS = Number(arg("late-after", "0")) * 1000

const PROVIDER_KEY = "sk-bench-provider-key-0123456789"
/** The fake's answer, streamed word by word (`--reply` to see what a chunk costs). */
const REPLY = arg("reply", "The quick brown fox jumps over the lazy dog.")
/** A wait between the fake's streamed chunks, as a model's tokens come one by one (default: none, all at once). */
const CHUNK_DELAY_MS = arg("chunk-delay-ms", "")

/** Keep-alive sockets, a fresh pool per cell: a socket idle past the server's keep-alive timeout between cells would be reset. */
let agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

/** One POST; resolves with elapsed ms once the whole body is read, after `check` accepts it. */
const post = (url: string, token: string, body: string, check: (text: string) => string | undefined): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const request = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), authorization: `Bearer ${token}` }
      },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () => {
          const problem = response.statusCode !== 200 ? `${response.statusCode} ${text.slice(0, 300)}` : check(text)
          if (problem) return reject(new Error(`${url}: ${problem}`))
          resolve(Number(process.hrtime.bigint() - started) / 1e6)
        })
      }
    )
    request.on("error", reject)
    request.end(body)
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

interface Cell {
  readonly name: string
  readonly load: string
  readonly turnsPerSecond: number
  readonly errors: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly serverCpuPerTurn: number | undefined
  readonly dbCpuPerTurn: number | undefined
  readonly rss: { idle: number; peak: number; after: number; late: number | undefined } | undefined
}

/** `TURNS` turns from `CONCURRENCY` clients, client i always sending `send(i, n)`. */
const drive = async (send: (client: number, n: number) => Promise<number>, turns: number) => {
  let next = 0
  let errors = 0
  const latencies: Array<number> = []
  const started = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, client) => {
      while (next < turns) {
        const n = next++
        // A failed turn (a reset connection, a stream without `response`) is counted, not fatal.
        await send(client, n).then(
          (ms) => void latencies.push(ms),
          (error: unknown) => {
            if (errors++ < 3) console.error(`turn ${n}: ${String(error).slice(0, 300)}`)
          }
        )
      }
    })
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  latencies.sort((a, b) => a - b)
  return {
    turnsPerSecond: latencies.length / seconds,
    errors,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99)
  }
}

const measureCell = async (
  name: string,
  send: (client: number, n: number) => Promise<number>,
  serverPid: number | undefined,
  dbPids: () => Promise<ReadonlyArray<number>>
): Promise<Cell> => {
  agent.destroy()
  agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  await drive(send, WARMUP_TURNS)
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const load = loadAverage()
  const idle = rssMb(serverPid)
  let peak = idle
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(serverPid))), 100)
  const pids = await dbPids()
  const cpuBefore = cpuMs(serverPid)
  const dbBefore = pids.reduce((sum, pid) => sum + cpuMs(pid), 0)
  const result = await drive(send, TURNS)
  const cpu = cpuMs(serverPid) - cpuBefore
  const db = pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - dbBefore
  clearInterval(sampler)
  peak = Math.max(peak, rssMb(serverPid))
  await new Promise((resolve) => setTimeout(resolve, AFTER_MS))
  const after = serverPid === undefined ? 0 : rssMb(serverPid)
  if (LATE_AFTER_MS > AFTER_MS) await new Promise((resolve) => setTimeout(resolve, LATE_AFTER_MS - AFTER_MS))
  const cell: Cell = {
    name,
    load,
    ...result,
    serverCpuPerTurn: serverPid === undefined ? undefined : cpu / Math.max(1, TURNS - result.errors),
    dbCpuPerTurn: pids.length ? db / Math.max(1, TURNS - result.errors) : undefined,
    rss: serverPid === undefined ? undefined : { idle, peak, after, late: LATE_AFTER_MS > AFTER_MS ? rssMb(serverPid) : undefined }
  }
  console.log(row(cell))
  return cell
}

const fixed = (x: number | undefined, digits = 2) => (x === undefined ? "-" : x.toFixed(digits))
const header =
  `| cell | load avg before | turns/s | failed turns | p50 ms | p95 ms | p99 ms | server CPU ms/turn | PostgreSQL CPU ms/turn | RSS MB idle / peak / after${
    LATE_AFTER_MS > AFTER_MS ? ` / ${LATE_AFTER_MS / 1000} s after` : ""
  } |\n|---|---|---|---|---|---|---|---|---|---|`
const row = (c: Cell) =>
  `| ${c.name} | ${c.load} | ${c.turnsPerSecond.toFixed(0)} | ${c.errors} | ${fixed(c.p50, 1)} | ${fixed(c.p95, 1)} | ${
    fixed(c.p99, 1)
  } | ${fixed(c.serverCpuPerTurn)} | ${fixed(c.dbCpuPerTurn)} | ${
    c.rss
      ? `${c.rss.idle.toFixed(0)} / ${c.rss.peak.toFixed(0)} / ${c.rss.after.toFixed(0)}${
        c.rss.late === undefined ? "" : ` / ${c.rss.late.toFixed(0)}`
      }`
      : "-"
  } |`

const endsWithResponse = (text: string) => {
  const events = text.split("\n\n").filter((block) => block.includes("data: "))
  const last = events.at(-1) ?? ""
  return /"type":"response"/.test(last) ? undefined : `stream ended without response: ${text.slice(-300)}`
}
const blockingAnswer = (text: string) => (text.includes(REPLY) ? undefined : `no reply in ${text.slice(0, 300)}`)
const directStreamEnds = (text: string) => (text.includes("data: [DONE]") ? undefined : "direct stream without [DONE]")
const none = async () => []

const main = async () => {
  // Built first: a test run that touched integrations/ makes dist/ look stale, and a stale dist/
  // would run the servers through tsx, a different program from what `npm start` runs.
  if (spawnSync(process.execPath, [path.resolve(import.meta.dirname, "../bin/build.mjs")], { stdio: "ignore" }).status !== 0) {
    throw new Error("the build failed")
  }
  console.log(
    `turns=${TURNS} concurrency=${CONCURRENCY} provider delay=${DELAY_MS} ms reply=${REPLY.split(/\s+/).length} words${
      CHUNK_DELAY_MS ? ` ${CHUNK_DELAY_MS} ms apart` : ""
    } node=${process.version} cpus=${os.cpus().length}`
  )
  console.log(header)
  const fake = await startFakeLlmProcess({ delayMs: DELAY_MS, reply: REPLY, apiKey: PROVIDER_KEY, chunkDelayMs: CHUNK_DELAY_MS })
  const cells: Array<Cell> = []
  try {
    // The baseline: the request Cairn makes for a turn, sent straight to the fake.
    const completion = (stream: boolean) =>
      JSON.stringify({
        model: "fake-model",
        messages: [{ role: "user", content: "Hi" }],
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {})
      })
    const blockingBody = completion(false)
    const streamingBody = completion(true)
    const directUrl = `${fake.url}/v1/chat/completions`
    if (DIRECT) {
      cells.push(
        await measureCell("fake LLM direct, blocking", () => post(directUrl, PROVIDER_KEY, blockingBody, blockingAnswer), undefined, none)
      )
    }
    if (DIRECT) {
      cells.push(
        await measureCell(
          "fake LLM direct, streaming",
          () => post(directUrl, PROVIDER_KEY, streamingBody, directStreamEnds),
          undefined,
          none
        )
      )
    }

    const versions: ReadonlyArray<{ readonly label: string; readonly root: string | undefined }> = BEFORE
      ? [{ label: "Cairn before", root: path.resolve(BEFORE) }, { label: "Cairn after", root: undefined }]
      : [{ label: "Cairn", root: undefined }]
    for (const backend of BACKENDS) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const version of versions) {
          const db = await createTestDatabase(backend)
          // One folder per server: node writes one profile per thread (tsx's loader runs in a thread of its own); the main thread's is the largest.
          const profileArgs = PROFILE_DIR
            ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(PROFILE_DIR, `${backend}-${MODES.join("+")}`)}`]
            : []
          const server = await spawnServer(
            db,
            {
              OPENAI_BASE_URL: `${fake.url}/v1`,
              OPENAI_API_KEY: PROVIDER_KEY,
              DEFAULT_MODEL: "fake-model",
              LOG_LEVEL: "warning",
              RUNS_PER_CREDENTIAL_MAX: String(Math.max(16, CONCURRENCY))
            },
            [...NODE_ARGS, ...profileArgs],
            version.root
          )
          const admin = db.databaseUrl ? new pg.Client({ connectionString: db.databaseUrl }) : undefined
          await admin?.connect()
          const dbPids = async (): Promise<ReadonlyArray<number>> => {
            if (!admin) return []
            const result = await admin.query<{ pid: number }>(
              "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            return result.rows.map((r) => r.pid)
          }
          try {
            const chat = (endpoint: string, check: (text: string) => string | undefined) => (client: number, n: number) =>
              post(
                `${server.baseUrl}${endpoint}`,
                API_KEY,
                JSON.stringify({ message: `turn ${n}`, client_id: `bench-${backend}-${client}` }),
                check
              )
            const pid = server.process.pid
            if (MODES.includes("blocking")) {
              cells.push(await measureCell(`${version.label}, ${backend}, blocking`, chat("/chat", blockingAnswer), pid, dbPids))
            }
            if (MODES.includes("streaming")) {
              cells.push(await measureCell(`${version.label}, ${backend}, streaming`, chat("/chat/stream", endsWithResponse), pid, dbPids))
            }
          } finally {
            await admin?.end()
            // SIGINT so node writes the CPU profile on the way out.
            await server.stop(PROFILE_DIR ? "SIGINT" : "SIGTERM")
            await db.drop()
          }
        }
      }
    }
  } finally {
    agent.destroy()
    fake.child.kill("SIGTERM")
  }
  console.log(`\n${header}\n${cells.map(row).join("\n")}`)
  console.log(`\nmachine load average at the end: ${loadAverage()}`)
}

await main()
