/**
 * What one blocking provider call costs the server: `OpenAiClient.chat` (the `openai` SDK as Cairn
 * configures it) against the cheapest call node can make (a keep-alive `node:http` POST whose JSON
 * answer is parsed), both to the same in-process fake provider, interleaved in rounds. CPU is this
 * process's (client and fake server alike, so the difference is the client's).
 *
 *   npx tsx bench/providerCall.ts [calls=1000] [rounds=5]
 */
import { Effect } from "effect"
import * as http from "node:http"
import { OpenAiClient } from "../src/providers/OpenAiClient.ts"
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"

const calls = Number(process.argv[2] ?? 1000)
const rounds = Number(process.argv[3] ?? 5)
const llm = await startFakeLlm({ record: false, apiKey: "sk-bench" })
const body = { model: "fake-model", messages: [{ role: "user", content: "Say hello in five words." }] }
const payload = JSON.stringify(body)
const sdk = new OpenAiClient({ baseUrl: llm.url, apiKey: "sk-bench", headers: {}, timeoutMs: 10_000 })
const agent = new http.Agent({ keepAlive: true })
const url = new URL(`${llm.url}/chat/completions`)

const bare = () =>
  new Promise<unknown>((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", authorization: "Bearer sk-bench" } },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString())))
      }
    )
    request.on("error", reject)
    request.end(payload)
  })
const viaSdk = () => Effect.runPromise(sdk.chat(body))

const measure = async (call: () => Promise<unknown>) => {
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < calls; i++) await call()
  const used = process.cpuUsage(cpu)
  return { wall: ((performance.now() - started) * 1000) / calls, cpu: (used.user + used.system) / calls }
}

for (let i = 0; i < 200; i++) await Promise.all([bare(), viaSdk()])
const results = { bare: [] as Array<{ wall: number; cpu: number }>, sdk: [] as Array<{ wall: number; cpu: number }> }
for (let round = 0; round < rounds; round++) {
  results.bare.push(await measure(bare))
  results.sdk.push(await measure(viaSdk))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const summary = (rs: Array<{ wall: number; cpu: number }>) => ({ wall: median(rs.map((r) => r.wall)), cpu: median(rs.map((r) => r.cpu)) })
const b = summary(results.bare)
const s = summary(results.sdk)
console.log(`${calls} calls × ${rounds} rounds, median per call`)
console.log(`  bare node:http   ${b.wall.toFixed(0)} µs wall, ${b.cpu.toFixed(0)} µs CPU`)
console.log(`  OpenAiClient     ${s.wall.toFixed(0)} µs wall, ${s.cpu.toFixed(0)} µs CPU   (+${(s.cpu - b.cpu).toFixed(0)} µs CPU, ${(s.cpu / b.cpu).toFixed(2)}×)`)
await llm.close()
agent.destroy()
process.exit(0)
