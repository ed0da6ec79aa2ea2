/**
 * What the garbage collector does for a chat turn, and where a turn's CPU runs by thread (issue 27,
 * items 2 and 4). The server runs under V8's `--trace-gc-nvp`, which logs every collection with
 * the bytes allocated since the one before and the bytes it promoted to the old generation; over a
 * run of turns that gives allocated and promoted KB a turn, collections per thousand turns and the
 * main thread's pause a turn. Those figures hardly move between runs of the same code, where CPU
 * per turn drifts by 10 % and more on these machines. CPU is read per thread from
 * /proc/<pid>/task, so the collector's helper threads show apart from the main thread.
 *
 *   npx tsx bench/gcTurns.ts [--backend postgres|pglite] [--turns 3000] [--concurrency 50]
 *                            [--node-args "--max-semi-space-size=32"] [--before <checkout with dist/ built>]
 *                            [--warmup 6000] [--env "PGLITE_WASM_TIER=optimizing"]   # settings for the server
 *
 * The fake LLM answers after 50 ms with nine words (as bench/turns.ts); each client is its own
 * session, sending turn after turn to `POST /chat`.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { API_KEY, spawnServer } from "../test/support/server.ts"
import { startFakeLlmProcess } from "./children.ts"
import { cpuOf, rssMb } from "./proc.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback
}
const BACKEND = arg("backend", "postgres") as Backend
const TURNS = Number(arg("turns", "3000"))
const CONCURRENCY = Number(arg("concurrency", "50"))
/** Turns before the measured ones: V8's optimizing of the server settles after a few thousand (bench/turns.ts). */
const WARMUP = Number(arg("warmup", "6000"))
const NODE_ARGS = arg("node-args", "").split(" ").filter(Boolean)
/** Settings for the server (`--env "PGLITE_WASM_TIER=optimizing"`), space-separated. */
const SERVER_ENV = Object.fromEntries(
  arg("env", "")
    .split(" ")
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)])
)
const BEFORE = arg("before", "")
const PROVIDER_KEY = "sk-bench-provider-key-0123456789"

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
const post = (url: string, body: string) =>
  new Promise<void>((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${API_KEY}`,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body))
        }
      },
      (response) => {
        response.resume()
        response.on("end", () => (response.statusCode === 200 ? resolve() : reject(new Error(`status ${response.statusCode}`))))
      }
    )
    request.on("error", reject)
    request.end(body)
  })

const drive = async (baseUrl: string, turns: number) => {
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, client) => {
      while (next < turns) {
        const n = next++
        await post(`${baseUrl}/chat`, JSON.stringify({ message: `turn ${n}`, client_id: `gc-${client}` }))
      }
    })
  )
}

/** CPU ms (user, system) of each thread of a process, by thread id. */
const threadCpu = (pid: number) =>
  new Map(fs.readdirSync(`/proc/${pid}/task`).map((tid) => [tid, cpuOf(`/proc/${pid}/task/${tid}/stat`)] as const))

/** The collections `--trace-gc-nvp` logged in a stretch of the server's output. */
const collections = (output: string) =>
  output
    .split("\n")
    .filter((line) => / gc=\w+ /.test(line))
    .map((line) => {
      const field = (name: string) => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0)
      return { kind: /gc=(\w+)/.exec(line)![1]!, pause: field("pause"), allocated: field("allocated"), promoted: field("promoted") }
    })

const measure = async (label: string, root: string | undefined) => {
  const db = await createTestDatabase(BACKEND)
  const fake = await startFakeLlmProcess({ delayMs: "50", reply: "The quick brown fox jumps over the lazy dog.", apiKey: PROVIDER_KEY })
  const server = await spawnServer(
    db,
    {
      OPENAI_BASE_URL: `${fake.url}/v1`,
      OPENAI_API_KEY: PROVIDER_KEY,
      DEFAULT_MODEL: "fake-model",
      LOG_LEVEL: "warning",
      RUNS_PER_CREDENTIAL_MAX: String(Math.max(16, CONCURRENCY)),
      ...SERVER_ENV
    },
    ["--trace-gc-nvp", ...NODE_ARGS],
    root
  )
  try {
    const pid = server.process.pid!
    await drive(server.baseUrl, WARMUP)
    const logged = server.output().length
    const before = threadCpu(pid)
    const started = process.hrtime.bigint()
    await drive(server.baseUrl, TURNS)
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    const after = threadCpu(pid)
    const rssAtEnd = rssMb(pid)
    const gcs = collections(server.output().slice(logged))
    let main = { user: 0, system: 0 }
    let others = 0
    for (const [tid, cpu] of after) {
      const was = before.get(tid) ?? { user: 0, system: 0 }
      if (tid === String(pid)) main = { user: cpu.user - was.user, system: cpu.system - was.system }
      else others += cpu.user + cpu.system - was.user - was.system
    }
    const perTurn = (x: number) => x / TURNS
    const sum = (key: "pause" | "allocated" | "promoted") => gcs.reduce((n, gc) => n + gc[key], 0)
    const count = (kind: string) => gcs.filter((gc) => gc.kind === kind).length
    return {
      label,
      turnsPerSecond: TURNS / seconds,
      mainUser: perTurn(main.user),
      mainSystem: perTurn(main.system),
      otherThreads: perTurn(others),
      scavenges: (count("s") * 1000) / TURNS,
      markCompacts: (count("mc") * 1000) / TURNS,
      allocatedKb: perTurn(sum("allocated")) / 1024,
      promotedKb: perTurn(sum("promoted")) / 1024,
      pauseMs: perTurn(sum("pause")),
      rssMb: rssAtEnd
    }
  } finally {
    await server.stop()
    await db.drop()
    fake.child.kill("SIGTERM")
  }
}

const rows = []
for (
  const [label, root] of BEFORE
    ? [["before", path.resolve(BEFORE)], ["after", undefined]] as const
    : [["this checkout", undefined]] as const
) {
  rows.push(await measure(label, root))
}
agent.destroy()
console.log(
  `backend=${BACKEND} turns=${TURNS} warm-up=${WARMUP} concurrency=${CONCURRENCY} node args: ${NODE_ARGS.join(" ") || "none"} env: ${
    arg("env", "") || "none"
  }`
)
console.log(
  "| | turns/s | main thread ms/turn (user + system) | other threads ms/turn | scavenges / 1000 turns | mark-compacts / 1000 turns | allocated KB/turn | promoted KB/turn | GC pause ms/turn | RSS at the end MB |"
)
console.log("|---|---|---|---|---|---|---|---|---|---|")
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.turnsPerSecond.toFixed(0)} | ${r.mainUser.toFixed(2)} + ${r.mainSystem.toFixed(2)} | ${
      r.otherThreads.toFixed(2)
    } | ${r.scavenges.toFixed(0)} | ${r.markCompacts.toFixed(1)} | ${r.allocatedKb.toFixed(0)} | ${r.promotedKb.toFixed(1)} | ${
      r.pauseMs.toFixed(3)
    } | ${r.rssMb.toFixed(0)} |`
  )
}
