/**
 * Soak: a `cairn serve` process under steady mixed traffic for SOAK_MINUTES (default 30), its
 * resident memory read every 10 s. Each second two blocking chat turns (each session takes 20
 * turns, then a new one starts); every 2 s a streamed turn; every 4 s a document search; every
 * 10 s a document ingested and a task queued: a rate a 2-core machine shared with other work keeps
 * up with, so that memory measures the server and not a backlog. The fake LLM (its own process, answering after 50 ms,
 * streaming its chunks 5 ms apart) answers the turns and the embeddings (EMBEDDING_MODEL names a
 * model of the default provider, so the packaged word vectors are not loaded: their one-time cost
 * is bench/gloveLoad.ts's subject, not a soak's). At the end: RSS at the start, 10 min and the end,
 * the highest, and the slope of the second half (MB per hour), which is what says flat or growing.
 *
 *   SOAK_MINUTES=30 SOAK_BACKEND=pglite npx tsx bench/soak.ts
 *
 * The server runs compiled (dist/), as a supervisor runs it, from a snapshot of this checkout
 * (SOAK_ROOT, default a fresh temporary copy with its own build): in a checkout being edited,
 * dist/ goes stale and `cairn serve` would fall back to tsx, which holds some 200 MB more.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { createTestDatabase, tempDir } from "../test/support/database.ts"
import { API_KEY, spawnServer } from "../test/support/server.ts"
import { startFakeLlmProcess } from "./children.ts"
import { loadAverage, rssMb } from "./proc.ts"

const minutes = Number(process.env.SOAK_MINUTES ?? 30)
const backend = process.env.SOAK_BACKEND === "postgres" ? "postgres" : "pglite"
const sampleEveryMs = 10_000

const llm = await startFakeLlmProcess({
  delayMs: "50",
  chunkDelayMs: "5",
  reply: "The quick brown fox jumps over the lazy dog, and then it rests in the shade of an old oak tree.",
  apiKey: "sk-soak-provider-key"
})
const db = await createTestDatabase(backend)
const checkout = path.resolve(import.meta.dirname, "..")

/** A copy of the checkout as it is now (modification times kept), built, with node_modules linked. */
const snapshot = () => {
  const root = tempDir("cairn-soak-")
  for (const entry of fs.readdirSync(checkout)) {
    if (entry === "node_modules" || entry === "dist" || entry === ".git" || entry === "data") continue
    fs.cpSync(path.join(checkout, entry), path.join(root, entry), { recursive: true, preserveTimestamps: true })
  }
  fs.symlinkSync(path.join(checkout, "node_modules"), path.join(root, "node_modules"))
  if (fs.existsSync(path.join(checkout, "dist/web"))) {
    fs.cpSync(path.join(checkout, "dist/web"), path.join(root, "dist/web"), { recursive: true })
  }
  execFileSync(process.execPath, [path.join(root, "bin/build.mjs")], { cwd: root, stdio: "ignore" })
  return root
}
const serverRoot = process.env.SOAK_ROOT ?? snapshot()
const ownSnapshot = process.env.SOAK_ROOT === undefined
const { distIsFresh } = (await import(path.join(serverRoot, "bin/dist.mjs"))) as { distIsFresh: () => boolean }
const compiled = distIsFresh()
const server = await spawnServer(
  db,
  {
    OPENAI_BASE_URL: `${llm.url}/v1`,
    OPENAI_API_KEY: "sk-soak-provider-key",
    DEFAULT_MODEL: "fake-model",
    EMBEDDING_MODEL: "fake-embedding",
    LOG_LEVEL: "warning",
    // One static key sends everything: its run cap is not what a soak measures.
    RUNS_PER_CREDENTIAL_MAX: "1000"
  },
  [],
  serverRoot
)
const pid = server.process.pid
const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" }

const counts = { chat: 0, stream: 0, search: 0, ingest: 0, task: 0, failed: 0 }
const failures = new Map<string, number>()
const fail = (what: string, status: number | string) => {
  counts.failed += 1
  const key = `${what} ${status}`
  failures.set(key, (failures.get(key) ?? 0) + 1)
}

/** One request; its body read to the end (a stream's too), counted by kind. */
const send = async (kind: keyof typeof counts, path: string, init: RequestInit = {}) => {
  try {
    const response = await fetch(`${server.baseUrl}${path}`, { ...init, headers })
    await response.arrayBuffer()
    if (response.ok) counts[kind] += 1
    else fail(kind, response.status)
  } catch (error) {
    fail(kind, (error as Error).message)
  }
}

const words = ["river", "mountain", "ledger", "invoice", "harbour", "engine", "garden", "signal", "archive", "weather"]
const paragraph = (n: number) =>
  Array.from({ length: 120 }, (_, i) => words[(n * 7 + i * 3) % words.length]).join(" ") + `. Document number ${n}.`

let tick = 0
/** The work of one second, started together (the load stays steady even when a request is slow). */
const second = () => {
  const t = tick++
  const pending: Array<Promise<void>> = []
  for (let i = 0; i < 2; i++) {
    const n = t * 2 + i
    pending.push(
      send("chat", "/chat", {
        method: "POST",
        body: JSON.stringify({ message: `Turn ${n}`, client_id: `soak-chat-${Math.floor(n / 20)}` })
      })
    )
  }
  if (t % 2 === 0) {
    pending.push(
      send("stream", "/chat/stream", {
        method: "POST",
        body: JSON.stringify({ message: `Stream ${t}`, client_id: `soak-stream-${Math.floor(t / 40)}` })
      })
    )
  }
  if (t % 4 === 0) {
    pending.push(send("search", `/api/v1/documents/search?q=${words[t % words.length]}+${words[(t + 3) % words.length]}&limit=5`))
  }
  if (t % 10 === 0) {
    pending.push(
      send("ingest", "/api/v1/documents", {
        method: "POST",
        body: JSON.stringify({ title: `Soak ${t}`, content: paragraph(t), integration_id: "soak" })
      })
    )
    pending.push(
      (async () => {
        const session = await fetch(`${server.baseUrl}/api/v1/sessions`, {
          method: "POST",
          headers,
          body: JSON.stringify({ client_id: `soak-task-${Math.floor(t / 100)}` })
        })
        const { session_id } = (await session.json()) as { session_id: string }
        await send("task", `/api/v1/sessions/${session_id}/messages`, {
          method: "POST",
          body: JSON.stringify({ content: `Task ${t}`, source: "soak", run_agent: true, notify: false })
        })
      })().catch((error) => fail("task", (error as Error).message))
    )
  }
  return Promise.all(pending)
}

/**
 * Where the resident memory is, from /proc/<pid>/smaps: WebAssembly memory (PGlite's heap: V8
 * maps it read-write, followed by a guard region of several GB it reserves; such memory only
 * grows), files mapped (code, libraries), and the rest of the anonymous memory (V8's heap,
 * malloc's arenas, buffers).
 */
const residentParts = (processId: number | undefined) => {
  const parts = { wasm: 0, file: 0, anon: 0 }
  try {
    let previous = { end: "", rss: 0, kind: "anon" as keyof typeof parts }
    let current = { start: "", end: "", guard: false, kind: "anon" as keyof typeof parts }
    for (const line of fs.readFileSync(`/proc/${processId}/smaps`, "utf8").split("\n")) {
      const mapping = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
      if (mapping) {
        current = {
          start: mapping[1]!,
          end: mapping[2]!,
          guard: mapping[3] === "---p",
          kind: mapping[4]!.startsWith("/") ? "file" : "anon"
        }
        continue
      }
      const size = /^Size:\s+(\d+) kB/.exec(line)
      // A guard of over 1 GB right after an anonymous read-write mapping: that mapping was a WebAssembly memory.
      if (size && current.guard && Number(size[1]) > 1024 * 1024 && previous.end === current.start && previous.kind === "anon") {
        parts.anon -= previous.rss
        parts.wasm += previous.rss
      }
      const rss = /^Rss:\s+(\d+) kB/.exec(line)
      if (rss) {
        parts[current.kind] += Number(rss[1]) / 1024
        previous = { end: current.end, rss: Number(rss[1]) / 1024, kind: current.kind }
      }
    }
  } catch {
    // The process is gone: nothing to split.
  }
  return parts
}

const samples: Array<{ readonly seconds: number; readonly rss: number }> = []
const started = Date.now()
const sample = () => {
  const seconds = Math.round((Date.now() - started) / 1000)
  const rss = rssMb(pid)
  samples.push({ seconds, rss })
  const parts = residentParts(pid)
  console.log(
    `t=${String(seconds).padStart(5)} s  rss=${rss.toFixed(0).padStart(4)} MB ` +
      `(wasm ${parts.wasm.toFixed(0)}, anon ${parts.anon.toFixed(0)}, files ${parts.file.toFixed(0)})  ` +
      `chat=${counts.chat} stream=${counts.stream} search=${counts.search} ingest=${counts.ingest} task=${counts.task} failed=${counts.failed}  load ${loadAverage()}`
  )
}

console.log(`soak: ${minutes} min on ${backend}, server pid ${pid}, ${compiled ? "compiled (dist/)" : "from source (tsx)"}`)
sample()
const inFlight = new Set<Promise<unknown>>()
const load = setInterval(() => {
  const work = second()
  inFlight.add(work)
  void work.finally(() => inFlight.delete(work))
}, 1000)
const sampler = setInterval(sample, sampleEveryMs)
await new Promise((resolve) => setTimeout(resolve, minutes * 60_000))
clearInterval(load)
await Promise.all(inFlight)
clearInterval(sampler)
sample()

/** Least-squares slope of RSS over time, in MB per hour. */
const slope = (points: ReadonlyArray<{ seconds: number; rss: number }>) => {
  const n = points.length
  const mx = points.reduce((s, p) => s + p.seconds, 0) / n
  const my = points.reduce((s, p) => s + p.rss, 0) / n
  const num = points.reduce((s, p) => s + (p.seconds - mx) * (p.rss - my), 0)
  const den = points.reduce((s, p) => s + (p.seconds - mx) ** 2, 0)
  return den === 0 ? 0 : (num / den) * 3600
}
const at = (seconds: number) => samples.reduce((best, p) => (Math.abs(p.seconds - seconds) < Math.abs(best.seconds - seconds) ? p : best))
const end = samples.at(-1)!
const secondHalf = samples.filter((p) => p.seconds >= end.seconds / 2)
console.log(
  `\nRSS: start ${samples[0]!.rss.toFixed(0)} MB, 1 min ${at(60).rss.toFixed(0)} MB, 10 min ${at(600).rss.toFixed(0)} MB, ` +
    `end (${(end.seconds / 60).toFixed(1)} min) ${end.rss.toFixed(0)} MB, highest ${
      Math.max(...samples.map((p) => p.rss)).toFixed(0)
    } MB; ` +
    `second half's slope ${slope(secondHalf).toFixed(1)} MB/h`
)
console.log(`requests: ${JSON.stringify(counts)}${failures.size > 0 ? `, failures: ${JSON.stringify(Object.fromEntries(failures))}` : ""}`)

await server.stop("SIGTERM")
llm.child.kill("SIGTERM")
await db.drop()
if (ownSnapshot) fs.rmSync(serverRoot, { recursive: true, force: true })
process.exit(0)
