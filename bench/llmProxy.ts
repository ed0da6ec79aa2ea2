/**
 * Proxy overhead: the same chat completion sent straight to the fake OpenAI-compatible server,
 * through a bare Node proxy (bench/bareProxy.ts: the cheapest a proxy hop can be here) and through
 * Cairn's /api/v1/llm/completions, in one run. Four processes: the fake server, the bare proxy and
 * `cairn serve` as children, this process as the client (keep-alive connections on every path).
 *
 *   npx tsx bench/llmProxy.ts [--sequential N] [--concurrent-total N] [--concurrency C] [--backend pglite|postgres] [--upstream-latency-ms MS[,MS...]]
 *
 * For each provider latency (default 0 and 50 ms: a CPU-bound worst case, and a provider far
 * faster than any real one), reports median / p90 / p99 latency of each path over N interleaved
 * sequential requests (added = proxied median minus direct median), and the throughput of each
 * path with C requests in flight. Targets: median added latency < 2 ms; throughput through Cairn
 * >= 0.8 of direct.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { API_KEY, type ChildServer, freePort, spawnServer } from "../test/support/server.ts"
import { cpuMs, loadAverage } from "./proc.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const SEQUENTIAL = Number(arg("sequential", "1000"))
const CONCURRENT_TOTAL = Number(arg("concurrent-total", "5000"))
const CONCURRENCY = Number(arg("concurrency", "50"))
const BACKEND = arg("backend", "pglite") as Backend
/** The fake provider's own latency per request, one measurement each (0: CPU-bound, the worst case). */
const UPSTREAM_LATENCIES_MS = arg("upstream-latency-ms", "0,50").split(",").map((x) => x.trim())
const WARMUP = 200

const PROVIDER_KEY = "sk-bench-provider-key-0123456789"
const root = path.resolve(import.meta.dirname, "..")
const messages = [
  { role: "system", content: "You are a terse assistant." },
  { role: "user", content: "Say hello in five words." }
]

/** A child process running a TypeScript file, once it says it is listening on the given port. */
const startChild = async (file: string, env: Record<string, string>, port: number): Promise<{ child: ChildProcess; url: string }> => {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, file)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"]
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening")) resolve()
    })
    child.on("exit", (code) => reject(new Error(`${file} exited with ${code}`)))
  })
  return { child, url: `http://127.0.0.1:${port}` }
}

const startFake = async (latencyMs: string) => {
  const port = await freePort()
  return startChild("test/fixtures/fakeLlmMain.ts", {
    FAKE_LLM_PORT: String(port),
    FAKE_LLM_API_KEY: PROVIDER_KEY,
    FAKE_LLM_DELAY_MS: latencyMs
  }, port)
}

const startBareProxy = async (upstream: string) => {
  const port = await freePort()
  return startChild(
    "bench/bareProxy.ts",
    { BARE_PROXY_PORT: String(port), BARE_PROXY_UPSTREAM: upstream, BARE_PROXY_KEY: PROVIDER_KEY },
    port
  )
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

/** One POST with a JSON body; resolves with the elapsed milliseconds, rejects on a non-200. */
const post = (url: string, token: string, body: string | undefined): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const request = http.request(
      url,
      {
        method: body === undefined ? "GET" : "POST",
        agent,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }),
          authorization: `Bearer ${token}`
        }
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          if (response.statusCode !== 200) return reject(new Error(`${url}: ${response.statusCode} ${Buffer.concat(chunks)}`))
          resolve(Number(process.hrtime.bigint() - started) / 1e6)
        })
      }
    )
    request.on("error", reject)
    request.end(body)
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const summary = (samples: ReadonlyArray<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) }
}

const throughput = async (send: () => Promise<number>) => {
  let remaining = CONCURRENT_TOTAL
  const started = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (remaining-- > 0) await send()
    })
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return CONCURRENT_TOTAL / seconds
}

const ms = (x: number) => x.toFixed(3).padStart(8)

/** One full measurement against a fake provider answering after `latencyMs`. */
const measure = async (latencyMs: string) => {
  const fake = await startFake(latencyMs)
  const directUrl = `${fake.url}/v1/chat/completions`
  const bare = await startBareProxy(directUrl)
  const db = await createTestDatabase(BACKEND)
  let cairn: ChildServer | undefined
  try {
    cairn = await spawnServer(db, {
      OPENAI_BASE_URL: `${fake.url}/v1`,
      OPENAI_API_KEY: PROVIDER_KEY,
      DEFAULT_MODEL: "fake-model",
      LOG_LEVEL: "warning"
    })
    const proxyUrl = `${cairn.baseUrl}/api/v1/llm/completions`
    // Every path receives the same body; Cairn forwards exactly it.
    const body = JSON.stringify({ model: "fake-model", messages, temperature: 0.2 })
    const direct = () => post(directUrl, PROVIDER_KEY, body)
    const viaBare = () => post(bare.url, PROVIDER_KEY, body)
    const proxied = () => post(proxyUrl, API_KEY, body)
    // The router's floor: an authenticated route answered from memory through the HttpApi router
    // (the router the proxy goes through too), no upstream call.
    const floor = () => post(`${cairn!.baseUrl}/api/v1/admin/providers/default`, API_KEY, undefined)

    for (let i = 0; i < WARMUP; i++) {
      await direct()
      await viaBare()
      await proxied()
    }

    // Interleaved, rotating which goes first, so drift affects every path alike.
    const paths = [direct, viaBare, proxied]
    const samples: Array<Array<number>> = [[], [], []]
    for (let i = 0; i < SEQUENTIAL; i++) {
      for (let k = 0; k < 3; k++) {
        const which = (i + k) % 3
        samples[which]!.push(await paths[which]!())
      }
    }
    const [d, b, p] = samples.map(summary) as [ReturnType<typeof summary>, ReturnType<typeof summary>, ReturnType<typeof summary>]

    await throughput(direct) // warm every pool at full concurrency
    await throughput(viaBare)
    await throughput(proxied)
    const rates = { direct: [] as Array<number>, bare: [] as Array<number>, cairn: [] as Array<number> }
    let cairnCpu = 0
    let fakeCpu = 0
    for (let round = 0; round < 2; round++) {
      rates.direct.push(await throughput(direct))
      rates.bare.push(await throughput(viaBare))
      const cairnBefore = cpuMs(cairn.process.pid)
      const fakeBefore = cpuMs(fake.child.pid)
      rates.cairn.push(await throughput(proxied))
      cairnCpu += cpuMs(cairn.process.pid) - cairnBefore
      fakeCpu += cpuMs(fake.child.pid) - fakeBefore
    }
    const floorBefore = cpuMs(cairn.process.pid)
    const floorRate = await throughput(floor)
    const floorCpuPerRequest = ((cpuMs(cairn.process.pid) - floorBefore) * 1000) / CONCURRENT_TOTAL
    const best = (xs: Array<number>) => Math.max(...xs)

    console.log(`\nprovider latency ${latencyMs} ms`)
    console.log(`  sequential latency ms      median      p90      p99`)
    console.log(`    direct                 ${ms(d.median)} ${ms(d.p90)} ${ms(d.p99)}`)
    console.log(`    bare Node proxy        ${ms(b.median)} ${ms(b.p90)} ${ms(b.p99)}`)
    console.log(`    through Cairn          ${ms(p.median)} ${ms(p.p90)} ${ms(p.p99)}`)
    console.log(`    median added by the bare proxy: ${ms(b.median - d.median)} ms`)
    console.log(`    median added by Cairn:          ${ms(p.median - d.median)} ms   target < 2 ms`)
    console.log(`  throughput at ${CONCURRENCY} concurrent, req/s (two rounds each, best kept)`)
    console.log(`    direct                 ${rates.direct.map((x) => x.toFixed(0)).join(" / ")}`)
    console.log(
      `    bare Node proxy        ${rates.bare.map((x) => x.toFixed(0)).join(" / ")}   ratio ${
        (best(rates.bare) / best(rates.direct)).toFixed(3)
      }`
    )
    console.log(
      `    through Cairn          ${rates.cairn.map((x) => x.toFixed(0)).join(" / ")}   ratio ${
        (best(rates.cairn) / best(rates.direct)).toFixed(3)
      }   target >= 0.8`
    )
    console.log(
      `  CPU per proxied request: Cairn ${((cairnCpu * 1000) / (2 * CONCURRENT_TOTAL)).toFixed(0)} µs, fake server ${
        ((fakeCpu * 1000) / (2 * CONCURRENT_TOTAL)).toFixed(0)
      } µs`
    )
    console.log(
      `  Cairn's router floor (GET /api/v1/admin/providers/default, no upstream): ${floorRate.toFixed(0)} req/s, ${
        floorCpuPerRequest.toFixed(0)
      } µs CPU each`
    )
  } finally {
    await cairn?.stop()
    bare.child.kill("SIGTERM")
    fake.child.kill("SIGTERM")
    await db.drop()
  }
}

const main = async () => {
  console.log(
    `backend=${BACKEND} sequential=${SEQUENTIAL} concurrency=${CONCURRENCY} concurrent_total=${CONCURRENT_TOTAL} node=${process.version} cpus=${os.cpus().length}`
  )
  try {
    for (const latency of UPSTREAM_LATENCIES_MS) await measure(latency)
  } finally {
    agent.destroy()
  }
  console.log(`\nmachine load average at the end: ${loadAverage()}`)
}

await main()
