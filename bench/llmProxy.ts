/**
 * Proxy overhead: the same chat completion sent straight to the fake OpenAI-compatible server and
 * through Cairn's /api/v1/llm/completions, in one run. Three processes: the fake server and
 * `cairn serve` as children, this process as the client (keep-alive connections on both paths).
 *
 *   npx tsx bench/llmProxy.ts [--sequential N] [--concurrent-total N] [--concurrency C] [--backend pglite|postgres] [--upstream-latency-ms MS]
 *
 * Reports median / p90 / p99 latency of each path over N interleaved sequential requests (the
 * added latency is proxied minus direct), and the throughput of each path with C requests in
 * flight. Targets: median added latency < 2 ms; throughput through Cairn >= 0.8 of direct.
 */
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { createTestDatabase, type Backend } from "../test/support/database.ts"
import { API_KEY, freePort, spawnServer, type ChildServer } from "../test/support/server.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const SEQUENTIAL = Number(arg("sequential", "1000"))
const CONCURRENT_TOTAL = Number(arg("concurrent-total", "5000"))
const CONCURRENCY = Number(arg("concurrency", "50"))
const BACKEND = arg("backend", "pglite") as Backend
/** The fake provider's own latency per request (default 0: CPU-bound, the worst case for the ratio). */
const UPSTREAM_LATENCY_MS = arg("upstream-latency-ms", "0")
const WARMUP = 200

const PROVIDER_KEY = "sk-bench-provider-key-0123456789"
const root = path.resolve(import.meta.dirname, "..")
const messages = [
  { role: "system", content: "You are a terse assistant." },
  { role: "user", content: "Say hello in five words." }
]

const startFake = async (): Promise<{ child: ChildProcess; url: string }> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "test/fixtures/fakeLlmMain.ts")], {
    cwd: root,
    env: { ...process.env, FAKE_LLM_PORT: String(port), FAKE_LLM_API_KEY: PROVIDER_KEY, FAKE_LLM_DELAY_MS: UPSTREAM_LATENCY_MS },
    stdio: ["ignore", "pipe", "inherit"]
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening")) resolve()
    })
    child.on("exit", (code) => reject(new Error(`fake LLM exited with ${code}`)))
  })
  return { child, url: `http://127.0.0.1:${port}` }
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

/** CPU time (user + system) a process has used, in ms, from /proc (Linux; 0 elsewhere). */
const cpuMs = (pid: number | undefined): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // clock ticks at 100 Hz
  } catch {
    return 0
  }
}

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

const main = async () => {
  const fake = await startFake()
  const db = await createTestDatabase(BACKEND)
  let cairn: ChildServer | undefined
  try {
    cairn = await spawnServer(db, {
      OPENAI_BASE_URL: `${fake.url}/v1`,
      OPENAI_API_KEY: PROVIDER_KEY,
      DEFAULT_MODEL: "fake-model",
      LOG_LEVEL: "warning"
    })
    const directUrl = `${fake.url}/v1/chat/completions`
    const proxyUrl = `${cairn.baseUrl}/api/v1/llm/completions`
    // The bodies each side receives: Cairn forwards exactly the direct body.
    const directBody = JSON.stringify({ model: "fake-model", messages, temperature: 0.2 })
    const proxyBody = JSON.stringify({ model: "fake-model", messages, temperature: 0.2 })
    const direct = () => post(directUrl, PROVIDER_KEY, directBody)
    const proxied = () => post(proxyUrl, API_KEY, proxyBody)
    // The server's own floor: an authenticated route answered from memory, no upstream call.
    const floor = () => post(`${cairn!.baseUrl}/api/v1/admin/providers/default`, API_KEY, undefined)

    for (let i = 0; i < WARMUP; i++) {
      await direct()
      await proxied()
    }

    const directSamples: Array<number> = []
    const proxiedSamples: Array<number> = []
    for (let i = 0; i < SEQUENTIAL; i++) {
      // Interleaved, alternating which goes first, so drift affects both alike.
      if (i % 2 === 0) {
        directSamples.push(await direct())
        proxiedSamples.push(await proxied())
      } else {
        proxiedSamples.push(await proxied())
        directSamples.push(await direct())
      }
    }
    const d = summary(directSamples)
    const p = summary(proxiedSamples)
    const added = summary(proxiedSamples.map((x, i) => x - directSamples[i]!))

    await throughput(direct) // warm the pool at full concurrency
    const directRate = await throughput(direct)
    const cairnBefore = cpuMs(cairn.process.pid)
    const fakeBefore = cpuMs(fake.child.pid)
    const proxiedRate = await throughput(proxied)
    const cairnCpuPerRequest = ((cpuMs(cairn.process.pid) - cairnBefore) * 1000) / CONCURRENT_TOTAL
    const fakeCpuPerRequest = ((cpuMs(fake.child.pid) - fakeBefore) * 1000) / CONCURRENT_TOTAL
    const floorBefore = cpuMs(cairn.process.pid)
    const floorRate = await throughput(floor)
    const floorCpuPerRequest = ((cpuMs(cairn.process.pid) - floorBefore) * 1000) / CONCURRENT_TOTAL
    const directRate2 = await throughput(direct)
    const proxiedRate2 = await throughput(proxied)
    const directBest = Math.max(directRate, directRate2)
    const proxiedBest = Math.max(proxiedRate, proxiedRate2)

    const ms = (x: number) => x.toFixed(3)
    console.log(`backend=${BACKEND} sequential=${SEQUENTIAL} concurrency=${CONCURRENCY} concurrent_total=${CONCURRENT_TOTAL} node=${process.version}`)
    console.log(`sequential latency ms      median    p90      p99`)
    console.log(`  direct                   ${ms(d.median)}  ${ms(d.p90)}  ${ms(d.p99)}`)
    console.log(`  through Cairn            ${ms(p.median)}  ${ms(p.p90)}  ${ms(p.p99)}`)
    console.log(`  added (paired)           ${ms(added.median)}  ${ms(added.p90)}  ${ms(added.p99)}`)
    console.log(`  median added (proxied median - direct median): ${ms(p.median - d.median)} ms  target < 2 ms`)
    console.log(`throughput at ${CONCURRENCY} concurrent, req/s (two rounds each, best kept)`)
    console.log(`  direct                   ${directRate.toFixed(0)} / ${directRate2.toFixed(0)}`)
    console.log(`  through Cairn            ${proxiedRate.toFixed(0)} / ${proxiedRate2.toFixed(0)}`)
    console.log(`  ratio                    ${(proxiedBest / directBest).toFixed(3)}  target >= 0.8`)
    console.log(`  Cairn floor (GET /api/v1/admin/providers/default, no upstream): ${floorRate.toFixed(0)} req/s, ${floorCpuPerRequest.toFixed(0)} µs CPU each`)
    console.log(`CPU per proxied request (first concurrent round): Cairn ${cairnCpuPerRequest.toFixed(0)} µs, fake server ${fakeCpuPerRequest.toFixed(0)} µs`)
    console.log(`machine load average at the end: ${fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} on ${os.cpus().length} CPUs`)
  } finally {
    agent.destroy()
    await cairn?.stop()
    fake.child.kill("SIGTERM")
    await db.drop()
  }
}

await main()
