/**
 * What one provider call costs the server, to the same in-process fake provider, interleaved in
 * rounds. CPU is this process's (client and fake server alike, so a difference is the client's).
 * - blocking: `OpenAiClient.chat` (the `openai` SDK as Cairn configures it) against the cheapest
 *   call node can make (a keep-alive `node:http` POST whose JSON answer is parsed);
 * - streamed (a turn's call, the fake's 9-word answer as 11 events): `OpenAiClient.chatStream`
 *   (node:http, its own event-stream reading) against the `openai` SDK's own streamed call over
 *   the same node:http fetch, read through its iterator.
 *
 *   npx tsx bench/providerCall.ts [calls=1000] [rounds=5]
 */
import { Effect } from "effect"
import * as http from "node:http"
import OpenAI from "openai"
import { nodeFetch } from "../src/providers/NodeFetch.ts"
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

/** A keep-alive POST of `text`, its answer's bytes read whole. */
const barePost = (text: string) =>
  new Promise<Buffer>((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", authorization: "Bearer sk-bench" } },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve(Buffer.concat(chunks)))
      }
    )
    request.on("error", reject)
    request.end(text)
  })
const bare = () => barePost(payload).then((bytes) => JSON.parse(bytes.toString()))
/** The streamed call's floor: the same request, its event stream read to the end and not decoded. */
const streamPayload = JSON.stringify({ ...body, stream: true })
const bareStream = () => barePost(streamPayload)
const viaSdk = () => Effect.runPromise(sdk.chat(body))

const sdkItself = new OpenAI({ baseURL: llm.url, apiKey: "sk-bench", maxRetries: 0, fetch: nodeFetch, logLevel: "off" })
const sdkStream = async () => {
  let n = 0
  for await (
    const _chunk of await sdkItself.chat.completions.create({ ...body, stream: true } as never) as unknown as AsyncIterable<unknown>
  ) n++
  return n
}
const directStream = () =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(sdk.chatStream(body), (events) =>
        Effect.async<number>((resume) => {
          let n = 0
          events.read({
            chunks: (batch) => void (n += batch.length),
            end: () => resume(Effect.succeed(n)),
            fail: (error) => resume(Effect.die(error))
          })
        }))
    )
  )

const measure = async (call: () => Promise<unknown>) => {
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < calls; i++) await call()
  const used = process.cpuUsage(cpu)
  return { wall: ((performance.now() - started) * 1000) / calls, cpu: (used.user + used.system) / calls }
}

for (let i = 0; i < 200; i++) await Promise.all([bare(), viaSdk(), sdkStream(), directStream()])
if ((await sdkStream()) !== (await directStream())) throw new Error("the two streamed calls read different payloads")
const results = {
  bare: [] as Array<{ wall: number; cpu: number }>,
  sdk: [] as Array<{ wall: number; cpu: number }>,
  bareStream: [] as Array<{ wall: number; cpu: number }>,
  sdkStream: [] as Array<{ wall: number; cpu: number }>,
  directStream: [] as Array<{ wall: number; cpu: number }>
}
for (let round = 0; round < rounds; round++) {
  results.bare.push(await measure(bare))
  results.sdk.push(await measure(viaSdk))
  results.bareStream.push(await measure(bareStream))
  results.sdkStream.push(await measure(sdkStream))
  results.directStream.push(await measure(directStream))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const summary = (rs: Array<{ wall: number; cpu: number }>) => ({ wall: median(rs.map((r) => r.wall)), cpu: median(rs.map((r) => r.cpu)) })
const b = summary(results.bare)
const s = summary(results.sdk)
console.log(`${calls} calls × ${rounds} rounds, median per call`)
console.log(`  bare node:http   ${b.wall.toFixed(0)} µs wall, ${b.cpu.toFixed(0)} µs CPU`)
console.log(
  `  OpenAiClient     ${s.wall.toFixed(0)} µs wall, ${s.cpu.toFixed(0)} µs CPU   (+${(s.cpu - b.cpu).toFixed(0)} µs CPU, ${
    (s.cpu / b.cpu).toFixed(2)
  }×)`
)
const bs = summary(results.bareStream)
console.log(`  streamed, bare node:http  ${bs.wall.toFixed(0)} µs wall, ${bs.cpu.toFixed(0)} µs CPU   (read, not decoded)`)
const ss = summary(results.sdkStream)
const ds = summary(results.directStream)
console.log(`  streamed, openai SDK      ${ss.wall.toFixed(0)} µs wall, ${ss.cpu.toFixed(0)} µs CPU`)
console.log(
  `  streamed, OpenAiClient    ${ds.wall.toFixed(0)} µs wall, ${ds.cpu.toFixed(0)} µs CPU   (${
    (ds.cpu / ss.cpu).toFixed(2)
  }× the SDK's; above the bare read ${(ds.cpu - bs.cpu).toFixed(0)} µs against the SDK's ${(ss.cpu - bs.cpu).toFixed(0)} µs)`
)
await llm.close()
agent.destroy()
process.exit(0)
