/**
 * The JavaScript heap one more open stream holds (issue 27, item 3): the server's live heap, from
 * V8 heap snapshots (which hold only what is reachable, after a full collection), with `--streams`
 * streams open and then with twice as many, divided by `--streams`. RSS per stream
 * (bench/footprint.ts) is the figure the issue names, but it moves with V8's decisions to grow its
 * spaces by megabytes at a time, ±50 KB a stream over 200 streams; the live heap does not.
 *
 *   npx tsx bench/streamHeap.ts [pglite|postgres|both] [--streams 120] [--before <checkout, dist/ built>]
 *
 * Each stream is a `/chat/stream` turn whose model has not answered yet (the fake LLM holds its
 * reply), as in bench/footprint.ts. Both waves together stay under the 256 sockets the server
 * keeps per provider (providers/NodeFetch.ts): past them a call waits for a socket and holds less,
 * which would understate what a stream holds. Besides the total it lists what grew most, by constructor,
 * and the fibers and Effect contexts per stream.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { API_KEY, spawnServer } from "../test/support/server.ts"

const args = process.argv.slice(2)
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 && args[at + 1] ? args[at + 1]! : fallback
}
const which = args.find((arg) => ["pglite", "postgres", "both"].includes(arg)) ?? "both"
const backends: ReadonlyArray<Backend> = which === "both" ? ["pglite", "postgres"] : [which as Backend]
const STREAMS = Number(option("streams", "120"))
const BEFORE = option("before", "")
const HOLD_MS = 60_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface HeapSummary {
  readonly total: number
  /** Self size and count per constructor (objects) or kind (closures, strings, arrays, code). */
  readonly byKind: ReadonlyMap<string, { readonly size: number; readonly count: number }>
}

/** Sums a snapshot's nodes by kind; only the node table is read. */
const summarize = (file: string): HeapSummary => {
  const snapshot = JSON.parse(fs.readFileSync(file, "utf8")) as {
    snapshot: { meta: { node_fields: Array<string>; node_types: [Array<string>] } }
    nodes: Array<number>
    strings: Array<string>
  }
  const fields = snapshot.snapshot.meta.node_fields
  const types = snapshot.snapshot.meta.node_types[0]
  const width = fields.length
  const typeAt = fields.indexOf("type")
  const nameAt = fields.indexOf("name")
  const sizeAt = fields.indexOf("self_size")
  const byKind = new Map<string, { size: number; count: number }>()
  let total = 0
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]!]!
    const size = snapshot.nodes[i + sizeAt]!
    const kind = type === "object" ? snapshot.strings[snapshot.nodes[i + nameAt]!]!.slice(0, 60) : `(${type})`
    const entry = byKind.get(kind) ?? { size: 0, count: 0 }
    entry.size += size
    entry.count += 1
    byKind.set(kind, entry)
    total += size
  }
  return { total, byKind }
}

const measure = async (backend: Backend, root: string | undefined) => {
  const llm = await startFakeLlm()
  const db = await createTestDatabase(backend)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-heap-"))
  const server = await spawnServer(
    db,
    {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "sk-bench",
      DEFAULT_MODEL: "fake-model",
      LOG_LEVEL: "warning",
      RUNS_PER_CREDENTIAL_MAX: String(3 * STREAMS)
    },
    ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`],
    root
  )
  const post = (endpoint: string, client: string) =>
    fetch(`${server.baseUrl}${endpoint}`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "Hi", client_id: client })
    })
  /** A snapshot written and complete (its size stops changing), summarized, then deleted. */
  const snapshot = async (): Promise<HeapSummary> => {
    const before = new Set(fs.readdirSync(dir))
    server.process.kill("SIGUSR2")
    for (let last = -1;;) {
      await sleep(1000)
      const made = fs.readdirSync(dir).find((file) => file.endsWith(".heapsnapshot") && !before.has(file))
      if (!made) continue
      const size = fs.statSync(path.join(dir, made)).size
      if (size === last && size > 0) {
        const summary = summarize(path.join(dir, made))
        fs.rmSync(path.join(dir, made))
        return summary
      }
      last = size
    }
  }
  try {
    // Warm: every path a stream takes has run and been compiled.
    for (let i = 0; i < 40; i++) await (await post("/chat", `warm-${i % 5}`)).text()
    llm.setDefaultReply({ text: "held open", delayMs: HOLD_MS })
    let opened = 0
    const wave = (from: number) =>
      Array.from({ length: STREAMS }, async (_, at) => {
        const response = await post("/chat/stream", `held-${from + at}`)
        const reader = response.body!.getReader()
        for (let first = true;; first = false) {
          const { done } = await reader.read()
          if (first) opened++
          if (done) break
        }
      })
    const untilOpen = async (count: number) => {
      while (opened < count) await sleep(50)
      await sleep(1000)
    }
    const first = Promise.all(wave(0))
    await untilOpen(STREAMS)
    const one = await snapshot()
    const second = Promise.all(wave(STREAMS))
    await untilOpen(2 * STREAMS)
    const two = await snapshot()
    llm.setDefaultReply({ text: "The quick brown fox" })
    await Promise.all([first, second])
    return { one, two }
  } finally {
    await server.stop()
    await db.drop()
    await llm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const perStream = (one: HeapSummary, two: HeapSummary, kind: string) => {
  const a = one.byKind.get(kind) ?? { size: 0, count: 0 }
  const b = two.byKind.get(kind) ?? { size: 0, count: 0 }
  return { size: (b.size - a.size) / STREAMS, count: (b.count - a.count) / STREAMS }
}

const main = async () => {
  if (spawnSync(process.execPath, [path.resolve(import.meta.dirname, "../bin/build.mjs")], { stdio: "ignore" }).status !== 0) {
    throw new Error("the build failed")
  }
  const versions = BEFORE
    ? [{ label: "before", root: path.resolve(BEFORE) }, { label: "after", root: undefined }]
    : [{ label: "this checkout", root: undefined }]
  console.log(`streams per wave=${STREAMS} node=${process.version}`)
  for (const backend of backends) {
    for (const version of versions) {
      const { one, two } = await measure(backend, version.root)
      const kb = (bytes: number) => (bytes / 1024).toFixed(1)
      console.log(`\n### ${backend}, ${version.label}\n`)
      console.log(
        `live heap with ${STREAMS} open: ${(one.total / 1048576).toFixed(1)} MB; with ${2 * STREAMS}: ${
          (two.total / 1048576).toFixed(1)
        } MB`
      )
      console.log(`**per open stream: ${kb((two.total - one.total) / STREAMS)} KB**`)
      const fibers = perStream(one, two, "FiberRuntime")
      const closures = perStream(one, two, "(closure)")
      console.log(`fibers per stream: ${fibers.count.toFixed(1)}; closures per stream: ${closures.count.toFixed(0)}\n`)
      console.log("| kind | KB per stream | count per stream |\n|---|---|---|")
      const kinds = [...two.byKind.keys()].map((kind) => ({ kind, ...perStream(one, two, kind) })).sort((x, y) => y.size - x.size)
      for (const row of kinds.slice(0, 10)) console.log(`| ${row.kind} | ${kb(row.size)} | ${row.count.toFixed(1)} |`)
    }
  }
}

await main()
