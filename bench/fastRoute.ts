/**
 * Is the completion proxy's fast route (http/FastRoutes.ts) worth keeping? One Cairn server, one
 * fake provider answering after 50 ms, and the same chat completion sent three ways, interleaved:
 * straight to the provider, through Cairn's fast route, and through Cairn's HttpApi router (a
 * request with an `Origin` header always takes the router; the CORS middleware's small extra work
 * counts against the router, so the comparison favours the fast route).
 *
 *   npx tsx bench/fastRoute.ts [requests] [latencyMs]
 *
 * The fast route stays only if its median saving is more than 0.5 ms (issue 12).
 */
import { spawn } from "node:child_process"
import * as http from "node:http"
import * as path from "node:path"
import { createTestDatabase } from "../test/support/database.ts"
import { API_KEY, freePort, spawnServer } from "../test/support/server.ts"

const REQUESTS = Number(process.argv[2] ?? 600)
const LATENCY_MS = process.argv[3] ?? "50"
const PROVIDER_KEY = "sk-bench-provider-key-0123456789"
const root = path.resolve(import.meta.dirname, "..")

const port = await freePort()
const fake = spawn(process.execPath, ["--import", "tsx", path.join(root, "test/fixtures/fakeLlmMain.ts")], {
  cwd: root,
  env: { ...process.env, FAKE_LLM_PORT: String(port), FAKE_LLM_API_KEY: PROVIDER_KEY, FAKE_LLM_DELAY_MS: LATENCY_MS },
  stdio: ["ignore", "pipe", "inherit"]
})
await new Promise<void>((resolve) => fake.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("listening") && resolve()))
const db = await createTestDatabase("postgres")
const cairn = await spawnServer(db, {
  OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
  OPENAI_API_KEY: PROVIDER_KEY,
  DEFAULT_MODEL: "fake-model",
  LOG_LEVEL: "warning"
})

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
const body = JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "Say hello in five words." }] })
const post = (url: string, headers: Record<string, string>): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const request = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", ...headers } }, (response) => {
      response.resume()
      response.on("end", () =>
        response.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`${url}: ${response.statusCode}`))
      )
    })
    request.on("error", reject)
    request.end(body)
  })

const proxyUrl = `${cairn.baseUrl}/api/v1/llm/completions`
const paths = {
  direct: () => post(`http://127.0.0.1:${port}/v1/chat/completions`, { authorization: `Bearer ${PROVIDER_KEY}` }),
  fastRoute: () => post(proxyUrl, { authorization: `Bearer ${API_KEY}` }),
  router: () => post(proxyUrl, { authorization: `Bearer ${API_KEY}`, origin: "http://bench.invalid" })
}
const names = Object.keys(paths) as Array<keyof typeof paths>
for (let i = 0; i < 50; i++) for (const name of names) await paths[name]()
const samples: Record<string, Array<number>> = { direct: [], fastRoute: [], router: [] }
for (let i = 0; i < REQUESTS; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!
    samples[name]!.push(await paths[name]())
  }
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const direct = median(samples.direct!)
console.log(`provider latency ${LATENCY_MS} ms, ${REQUESTS} requests each, interleaved`)
for (const name of names) {
  const m = median(samples[name]!)
  console.log(`  ${name.padEnd(10)} median ${m.toFixed(3)} ms   added ${(m - direct).toFixed(3)} ms`)
}
console.log(`  fast route saves ${(median(samples.router!) - median(samples.fastRoute!)).toFixed(3)} ms of median added latency (keep if > 0.5 ms)`)
await cairn.stop()
await db.drop()
fake.kill()
agent.destroy()
process.exit(0)
