/**
 * What the OpenAI-compatible surface adds to a turn over Cairn's own `/chat`, for the same bot and
 * the same fake model, interleaved round by round so machine noise hits every path alike:
 * the model called directly (the floor), `/chat`, `/v1/chat/completions` bound to a session
 * (`user`), and stateless (the history in the request); blocking, then streamed (whole turn).
 *
 *   npx tsx bench/openai.ts [pglite|postgres] [turns=300]
 */
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { startServer } from "../test/support/server.ts"

const backend = (process.argv[2] ?? "pglite") as "pglite" | "postgres"
const turns = Number(process.argv[3] ?? 300)

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const p90 = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)]!

const llm = await startFakeLlm({ record: false })
llm.setDefaultReply({ text: "The quick brown fox jumps over the lazy dog" })
const server = await startServer({
  backend,
  env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-bench", DEFAULT_MODEL: "fake-model", LOG_LEVEL: "error" }
})
const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" }

const timed = async (url: string, body: unknown, extraHeaders: Record<string, string> = {}, check: (text: string) => boolean) => {
  const started = performance.now()
  const response = await fetch(url, { method: "POST", headers: { ...headers, ...extraHeaders }, body: JSON.stringify(body) })
  const text = await response.text()
  if (response.status !== 200 || !check(text)) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 200)}`)
  return performance.now() - started
}

const history = [
  { role: "user", content: "Hello" },
  { role: "assistant", content: "Hello! How can I help?" }
]

const paths: ReadonlyArray<readonly [string, () => Promise<number>]> = [
  [
    "model directly (floor)",
    () =>
      timed(`${llm.url}/chat/completions`, { model: "fake-model", messages: [{ role: "user", content: "Hi" }] }, {
        authorization: "Bearer sk-bench"
      }, (t) => t.includes("fox"))
  ],
  ["/chat (session)", () => timed(`${server.baseUrl}/chat`, { message: "Hi", client_id: "bench-chat" }, {}, (t) => t.includes("fox"))],
  [
    "/v1/chat/completions, user (session)",
    () =>
      timed(
        `${server.baseUrl}/v1/chat/completions`,
        { model: "default", user: "bench-v1", messages: [{ role: "user", content: "Hi" }] },
        {},
        (t) => t.includes("fox")
      )
  ],
  [
    "/v1/chat/completions, stateless",
    () =>
      timed(
        `${server.baseUrl}/v1/chat/completions`,
        { model: "default", messages: [...history, { role: "user", content: "Hi" }] },
        {},
        (t) => t.includes("fox")
      )
  ],
  [
    "/chat/stream (session)",
    () =>
      timed(
        `${server.baseUrl}/chat/stream`,
        { message: "Hi", client_id: "bench-chat-stream" },
        {},
        (t) => t.includes("\"type\":\"response\"")
      )
  ],
  [
    "/v1 stream, user (session)",
    () =>
      timed(
        `${server.baseUrl}/v1/chat/completions`,
        { model: "default", user: "bench-v1-stream", stream: true, messages: [{ role: "user", content: "Hi" }] },
        {},
        (t) => t.includes("[DONE]")
      )
  ],
  [
    "/v1 stream, stateless",
    () =>
      timed(
        `${server.baseUrl}/v1/chat/completions`,
        { model: "default", stream: true, messages: [...history, { role: "user", content: "Hi" }] },
        {},
        (t) => t.includes("[DONE]")
      )
  ]
]

for (let i = 0; i < 30; i++) for (const [, run] of paths) await run()
const samples = new Map<string, Array<number>>(paths.map(([name]) => [name, []]))
for (let round = 0; round < turns; round++) {
  for (const [name, run] of paths) samples.get(name)!.push(await run())
}

const floor = median(samples.get("model directly (floor)")!)
const baseline = (name: string) => (name.includes("stream") ? "/chat/stream (session)" : "/chat (session)")
console.log(`[${backend}] ${turns} turns per path, sequential; ms`)
console.log("| path | median | p90 | added over the model | ratio to /chat (same mode) |")
console.log("|---|---|---|---|---|")
for (const [name] of paths) {
  const values = samples.get(name)!
  const m = median(values)
  const ratio = name === "model directly (floor)" ? "-" : `${((m - floor) / (median(samples.get(baseline(name))!) - floor)).toFixed(2)}`
  console.log(`| ${name} | ${m.toFixed(2)} | ${p90(values).toFixed(2)} | ${(m - floor).toFixed(2)} | ${ratio} |`)
}

await server.close()
await llm.close()
process.exit(0)
