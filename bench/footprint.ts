/**
 * The server's footprint as a process, on each database: time (and CPU) from spawn to healthy on
 * a first and a second start, RSS idle, idle CPU, memory per open stream, and RSS during and after
 * a burst of turns. RSS and CPU are the whole process tree's (the server and any child, launcher or
 * esbuild service), from /proc. Two columns per database, in one run:
 *
 *   before: the TypeScript through tsx, as `npm start` ran it (`tsx src/cli.ts serve`; npm's own
 *           process not counted)
 *   after:  the compiled server (`node bin/cairn.mjs serve` with dist/ fresh, what `npm start` runs)
 *
 *   npx tsx bench/footprint.ts [pglite|postgres|both] [--turns 300] [--streams 120] [--idle-seconds 30]
 *                              [--settle-seconds 45] [--stream-settle-seconds 10] [--before <checkout>] [--before-compiled]
 *                              [--node-args "<flags>"] [--before-node-args "<flags>"]   # node's flags for each column
 *
 * Idle is measured after `--settle-seconds` (V8 finishes compiling in the first half minute, and
 * about 30 s after the start collects the start-up heap in one full collection, half a second of
 * CPU across its threads: a window that takes it in reads as 1 % idle CPU rather than 0.3 %). Streams open in two waves of `--streams`: the first wave's RSS per stream
 * includes the heap growing from idle; the second's is what one more open stream costs.
 *
 * The fake LLM answers every turn (test/fixtures/fakeLlm.ts). Each start gets a fresh data
 * directory, and on PostgreSQL a fresh database.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as path from "node:path"
import { type FakeLlm, startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { type Backend, createTestDatabase, type TestDatabase } from "../test/support/database.ts"
import { childPids, freePort } from "../test/support/server.ts"
import { cpuMs, loadAverage, rssMb } from "./proc.ts"

const root = path.resolve(import.meta.dirname, "..")
const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 ? Number(args[at + 1]) : fallback
}
const which = args.find((arg) => ["pglite", "postgres", "both"].includes(arg)) ?? "both"
const backends: ReadonlyArray<Backend> = which === "both" ? ["pglite", "postgres"] : [which as Backend]
const turns = option("turns", 300)
// Two waves together stay under the 256 sockets the server keeps per provider (providers/NodeFetch.ts):
// past them a call waits for a socket and holds less, which would understate what a stream holds.
const streams = option("streams", 120)
const streamSettleSeconds = option("stream-settle-seconds", 10)
const idleSeconds = option("idle-seconds", 30)
const settleSeconds = option("settle-seconds", 45)
const API_KEY = "bench-static-key-0123456789"

// `--before <checkout>` runs the before column from another checkout (main, say), so it shows the
// code before this change too, not only the same code through tsx.
const beforeAt = args.indexOf("--before")
const beforeRoot = beforeAt >= 0 ? path.resolve(args[beforeAt + 1]!) : root
// `--before-compiled` runs that checkout compiled too (its dist/ built), to compare code with code.
const beforeCompiled = args.includes("--before-compiled")
// Flags for each column's node (a V8 heap setting, say); `--before .` with flags on one side only
// shows what a flag does.
const flagsOf = (name: string) => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 ? args[at + 1]!.split(" ").filter(Boolean) : []
}
const beforeNodeArgs = flagsOf("before-node-args")
const afterNodeArgs = flagsOf("node-args")
const variants = {
  before: {
    cwd: beforeRoot,
    argv: beforeCompiled
      ? [...beforeNodeArgs, path.join(beforeRoot, "bin/cairn.mjs"), "serve"]
      : [...beforeNodeArgs, path.join(beforeRoot, "node_modules/tsx/dist/cli.mjs"), "src/cli.ts", "serve"]
  },
  after: { cwd: root, argv: [...afterNodeArgs, path.join(root, "bin/cairn.mjs"), "serve"] }
} as const
type Variant = keyof typeof variants

// ---------------------------------------------------------------------------------------------
// The process tree, from /proc

const tree = (pid: number): Array<number> => [pid, ...childPids(pid).flatMap(tree)]

const treeRssMb = (pid: number) => tree(pid).reduce((sum, p) => sum + rssMb(p), 0)
const treeCpuSeconds = (pid: number) => tree(pid).reduce((sum, p) => sum + cpuMs(p), 0) / 1000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------
// One server

interface Running {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly healthyMs: number
  readonly healthyCpu: number
}

// Servers still running when the bench fails, stopped on the way out rather than left behind.
const live = new Set<ChildProcess>()
process.on("exit", () => {
  for (const pid of [...live].flatMap((child) => tree(child.pid!))) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
})

const start = async (variant: Variant, db: TestDatabase, llm: FakeLlm): Promise<Running> => {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, variants[variant].argv, {
    cwd: variants[variant].cwd,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      API_KEY,
      DATA_DIR: db.dataDir,
      LOG_LEVEL: "warning",
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "sk-bench",
      DEFAULT_MODEL: "fake-model",
      // The open-stream cell holds more runs of one key than the default fairness limit allows.
      RUNS_PER_CREDENTIAL_MAX: String(2 * streams + 100),
      ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {})
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  live.add(child)
  child.once("exit", () => live.delete(child))
  const baseUrl = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before it was healthy`)
    const ok = await fetch(`${baseUrl}/health`).then((r) => r.ok, () => false)
    if (ok) break
    await sleep(25)
  }
  return { child, baseUrl, healthyMs: performance.now() - started, healthyCpu: treeCpuSeconds(child.pid!) }
}

const stop = (running: Running) =>
  new Promise<void>((resolve) => {
    running.child.once("exit", () => resolve())
    running.child.kill("SIGTERM")
  })

const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" }

const turn = async (baseUrl: string, client: string, streamed: boolean) => {
  const response = await fetch(`${baseUrl}/chat${streamed ? "/stream" : ""}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ message: "Hi", client_id: client })
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`chat answered ${response.status}: ${text.slice(0, 200)}`)
}

/**
 * `count` turns, `concurrency` at a time, half blocking and half streamed; samples the RSS peak
 * meanwhile. A turn that fails (a reset connection, a 5xx) is counted, not retried: the figures
 * here are memory, the failures are reported beside them.
 */
const burst = async (running: Running, count: number, concurrency: number) => {
  let peak = 0
  let failed = 0
  const sampler = setInterval(() => (peak = Math.max(peak, treeRssMb(running.child.pid!))), 100)
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (next < count) {
        const i = next++
        await turn(running.baseUrl, `burst-${lane}`, i % 2 === 1).catch(() => void failed++)
      }
    })
  )
  clearInterval(sampler)
  return { peak: Math.max(peak, treeRssMb(running.child.pid!)), failed }
}

/**
 * Opens two waves of `count` streams on a model that answers after a while, the second while the
 * first is still open; the RSS each wave adds, per stream.
 */
const openStreams = async (running: Running, llm: FakeLlm, count: number) => {
  const idle = treeRssMb(running.child.pid!)
  const holdMs = 30_000 + 2 * streamSettleSeconds * 1000
  llm.setDefaultReply({ text: "held open", delayMs: holdMs })
  let firstBytes = 0
  let failed = 0
  const wave = (from: number) =>
    Array.from({ length: count }, async (_, at) => {
      const i = from + at
      const response = await fetch(`${running.baseUrl}/chat/stream`, {
        method: "POST",
        headers,
        body: JSON.stringify({ message: "Hi", client_id: `held-${i}` })
      })
      const reader = response.body!.getReader()
      let first = true
      for (;;) {
        const { done } = await reader.read()
        if (first) {
          first = false
          firstBytes++
        }
        if (done) break
      }
    }).map((stream) => stream.catch(() => void failed++))
  // Every stream of the wave has answered its first event (or, if the server sends none before
  // the model answers, every request has been in for a while): all are open, waiting on the model.
  // RSS once the wave is open and quiet: the least of the last half of a settle window, since V8
  // gives back young-generation room some seconds after a burst of allocation (the wave's own),
  // which moves a single reading by megabytes.
  const opening = async (total: number) => {
    const opened = performance.now()
    while (firstBytes < total && performance.now() - opened < 13_000) await sleep(50)
    const readings: Array<number> = []
    for (let waited = 0; waited < Math.max(1, streamSettleSeconds) * 1000; waited += 250) {
      await sleep(250)
      readings.push(treeRssMb(running.child.pid!))
    }
    return Math.min(...readings.slice(Math.floor(readings.length / 2)))
  }
  const firstWave = Promise.all(wave(0))
  const oneWave = await opening(count)
  const secondWave = Promise.all(wave(count))
  const twoWaves = await opening(2 * count)
  await Promise.all([firstWave, secondWave])
  llm.setDefaultReply({ text: "The quick brown fox jumps over the lazy dog" })
  return { perStreamKb: ((oneWave - idle) * 1024) / count, marginalKb: ((twoWaves - oneWave) * 1024) / count, failed }
}

interface Cell {
  firstStartMs: number
  firstStartCpu: number
  startMs: number
  startCpu: number
  processes: number
  startedMb: number
  idleMb: number
  idleCpuPercent: number
  burstPeakMb: number
  burstFailed: number
  beforeBurstMb: number
  afterBurstMb: number
  settledAfterBurstMb: number
  lateAfterBurstMb: number
  /** The first 5 s mark after the burst at which RSS was within 20 % of idle; none in 120 s. */
  backWithinSeconds: number | undefined
  marginalKb: number
  perStreamKb: number
  streamsFailed: number
  load: string
}

const measure = async (backend: Backend, variant: Variant, llm: FakeLlm): Promise<Cell> => {
  const db = await createTestDatabase(backend)
  try {
    const load = loadAverage()
    // The first start creates the database (initdb on PGlite, migrations on both); the second is the usual one.
    const first = await start(variant, db, llm)
    await stop(first)
    const running = await start(variant, db, llm)
    const pid = running.child.pid!
    await sleep(5000)
    const startedMb = treeRssMb(pid)
    const processes = tree(pid).length
    await sleep(Math.max(0, settleSeconds - 5) * 1000)
    const idleMb = treeRssMb(pid)
    const cpuBefore = treeCpuSeconds(pid)
    await sleep(idleSeconds * 1000)
    const idleCpuPercent = ((treeCpuSeconds(pid) - cpuBefore) / idleSeconds) * 100
    // Streams first, while the heap has only its idle headroom; after the burst, room the burst
    // left would hide what they add.
    const { perStreamKb, marginalKb, failed: streamsFailed } = await openStreams(running, llm, streams)
    // What the streams left settles before the burst, as the idle heap did.
    await sleep(settleSeconds * 1000)
    const beforeBurstMb = treeRssMb(pid)
    const { peak: burstPeakMb, failed: burstFailed } = await burst(running, turns, 20)
    // RSS every 5 s for two minutes: an idle server's heap goes back at its next full collection,
    // which comes with its next piece of work (the lease upkeep, every 20 s), not at a fixed mark.
    const afterBurst = new Map<number, number>()
    let backWithinSeconds: number | undefined
    for (let second = 5; second <= 120; second += 5) {
      await sleep(5000)
      const mb = treeRssMb(pid)
      afterBurst.set(second, mb)
      if (backWithinSeconds === undefined && mb <= idleMb * 1.2) backWithinSeconds = second
    }
    const afterBurstMb = afterBurst.get(10)!
    const settledAfterBurstMb = afterBurst.get(60)!
    const lateAfterBurstMb = afterBurst.get(120)!
    await stop(running)
    return {
      firstStartMs: first.healthyMs,
      firstStartCpu: first.healthyCpu,
      startMs: running.healthyMs,
      startCpu: running.healthyCpu,
      processes,
      startedMb,
      idleMb,
      idleCpuPercent,
      burstPeakMb,
      burstFailed,
      beforeBurstMb,
      afterBurstMb,
      settledAfterBurstMb,
      lateAfterBurstMb,
      backWithinSeconds,
      perStreamKb,
      marginalKb,
      streamsFailed,
      load
    }
  } finally {
    await db.drop()
  }
}

// ---------------------------------------------------------------------------------------------

const built = performance.now()
const build = spawnSync(process.execPath, [path.join(root, "bin/build.mjs")], { cwd: root, stdio: "inherit" })
if (build.status !== 0) throw new Error("the build failed")
console.log(`build: ${((performance.now() - built) / 1000).toFixed(1)} s`)

const llm = await startFakeLlm({ record: false })
const ofIdle = (cell: Cell, mb: number) => `${mb.toFixed(0)} (${((mb / cell.idleMb) * 100).toFixed(0)}%)`
const rows: Array<[string, (cell: Cell) => string]> = [
  ["load average at the cell's start", (c) => c.load],
  ["first start to healthy (s wall / s CPU)", (c) => `${(c.firstStartMs / 1000).toFixed(1)} / ${c.firstStartCpu.toFixed(1)}`],
  ["second start to healthy (s wall / s CPU)", (c) => `${(c.startMs / 1000).toFixed(1)} / ${c.startCpu.toFixed(1)}`],
  ["processes", (c) => String(c.processes)],
  ["RSS 5 s after the start (MB)", (c) => c.startedMb.toFixed(0)],
  [`RSS idle, ${settleSeconds} s after the start (MB)`, (c) => c.idleMb.toFixed(0)],
  [`idle CPU over the next ${idleSeconds} s (% of a core)`, (c) => c.idleCpuPercent.toFixed(2)],
  [`per open stream, ${streams} open after idle (KB)`, (c) => c.perStreamKb.toFixed(0)],
  [`per open stream, ${streams} more beside them (KB)`, (c) => c.marginalKb.toFixed(0)],
  ["open streams that failed", (c) => String(c.streamsFailed)],
  [`RSS peak, ${turns} turns at 20 concurrent (MB)`, (c) => c.burstPeakMb.toFixed(0)],
  ["turns of the burst that failed", (c) => String(c.burstFailed)],
  [`RSS ${settleSeconds} s after the streams, before the burst (MB; % of idle)`, (c) => ofIdle(c, c.beforeBurstMb)],
  ["RSS 10 s after the burst (MB; % of idle)", (c) => ofIdle(c, c.afterBurstMb)],
  ["RSS 60 s after the burst (MB; % of idle)", (c) => ofIdle(c, c.settledAfterBurstMb)],
  ["RSS 120 s after the burst (MB; % of idle)", (c) => ofIdle(c, c.lateAfterBurstMb)],
  [
    "back within 20 % of idle after the burst (s; read every 5 s)",
    (c) => (c.backWithinSeconds === undefined ? "not in 120 s" : String(c.backWithinSeconds))
  ]
]
try {
  for (const backend of backends) {
    const before = await measure(backend, "before", llm)
    const after = await measure(backend, "after", llm)
    console.log(
      `\n### ${backend}\n\n| | before (${beforeCompiled ? "compiled" : "tsx"}, ${
        path.relative(root, beforeRoot) || "this checkout"
      }) | after (compiled) |\n|---|---|---|`
    )
    for (const [label, show] of rows) console.log(`| ${label} | ${show(before)} | ${show(after)} |`)
  }
} finally {
  await llm.close()
}
