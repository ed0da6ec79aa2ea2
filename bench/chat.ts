/**
 * Chat turn overhead: the latency Cairn adds to a turn over the fake LLM's own latency, blocking
 * and streaming (time to first event), at 1 and at 100 concurrent sessions; then how many open
 * streams one process holds at once.
 *
 *   npx tsx bench/chat.ts [pglite|postgres] [turns=200] [streams=1000]
 */
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { startServer } from "../test/support/server.ts"

const backend = (process.argv[2] ?? "pglite") as "pglite" | "postgres"
const turns = Number(process.argv[3] ?? 200)
const streams = Number(process.argv[4] ?? 1000)

const median = (values: Array<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
const p95 = (values: Array<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))]!
}
const fmt = (ms: number) => `${ms.toFixed(2)} ms`

const llm = await startFakeLlm({ record: false })
llm.setDefaultReply({ text: "The quick brown fox jumps over the lazy dog" })
const server = await startServer({
  backend,
  env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-bench", DEFAULT_MODEL: "fake-model", LOG_LEVEL: "error" }
})
const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" }

/** The same streaming completion Cairn makes for a turn, sent straight to the fake. */
const direct = async () => {
  const started = performance.now()
  const response = await fetch(`${llm.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
    body: JSON.stringify({
      model: "fake-model",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Hi" }]
    })
  })
  const reader = response.body!.getReader()
  let first = 0
  for (;;) {
    const { done } = await reader.read()
    if (!first) first = performance.now() - started
    if (done) break
  }
  return { total: performance.now() - started, first }
}

const blocking = async (client: string) => {
  const started = performance.now()
  const response = await fetch(`${server.baseUrl}/chat`, {
    method: "POST",
    headers,
    body: JSON.stringify({ message: "Hi", client_id: client })
  })
  await response.json()
  if (response.status !== 200) throw new Error(`chat answered ${response.status}`)
  return performance.now() - started
}

const streamed = async (client: string) => {
  const started = performance.now()
  const response = await fetch(`${server.baseUrl}/chat/stream`, {
    method: "POST",
    headers,
    body: JSON.stringify({ message: "Hi", client_id: client })
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  let first = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    if (!first && text.includes("data: ")) first = performance.now() - started
  }
  if (!text.includes("\"type\":\"response\"")) throw new Error("stream ended without response")
  return { total: performance.now() - started, first }
}

const measure = async (concurrency: number) => {
  const rounds = Math.max(1, Math.floor(turns / concurrency))
  const directTotals: Array<number> = []
  const directFirsts: Array<number> = []
  const blockingTotals: Array<number> = []
  const streamFirsts: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    // Interleave the two so machine noise hits both alike.
    const d = await Promise.all(Array.from({ length: concurrency }, () => direct()))
    directTotals.push(...d.map((x) => x.total))
    directFirsts.push(...d.map((x) => x.first))
    blockingTotals.push(...(await Promise.all(Array.from({ length: concurrency }, (_, i) => blocking(`c${concurrency}-${i}`)))))
    const s = await Promise.all(Array.from({ length: concurrency }, (_, i) => streamed(`s${concurrency}-${i}`)))
    streamFirsts.push(...s.map((x) => x.first))
  }
  return {
    concurrency,
    samples: directTotals.length,
    directMedian: median(directTotals),
    blockingMedian: median(blockingTotals),
    blockingP95: p95(blockingTotals),
    addedBlocking: median(blockingTotals) - median(directTotals),
    directFirstMedian: median(directFirsts),
    streamFirstMedian: median(streamFirsts),
    addedFirstEvent: median(streamFirsts) - median(directFirsts)
  }
}

// Warm up connections, JIT and the sessions.
for (let i = 0; i < 20; i++) {
  await direct()
  await blocking("warm")
}

const results = [await measure(1), await measure(100)]
for (const r of results) {
  console.log(
    `[${backend}] ${r.concurrency} concurrent (${r.samples} turns): direct LLM median ${fmt(r.directMedian)}, ` +
      `Cairn /chat median ${fmt(r.blockingMedian)} (p95 ${fmt(r.blockingP95)}) → added ${fmt(r.addedBlocking)}; ` +
      `first event: direct ${fmt(r.directFirstMedian)}, Cairn stream ${fmt(r.streamFirstMedian)} → added ${fmt(r.addedFirstEvent)}`
  )
}

// Open streams held at once: every run waits on a slow model, so all streams stay open together.
llm.setDefaultReply({ text: "held open", delayMs: 4000 })
const opened = performance.now()
let errors = 0
let completed = 0
await Promise.all(
  Array.from({ length: streams }, (_, i) =>
    streamed(`held-${i}`)
      .then(() => void completed++)
      .catch(() => void errors++))
)
console.log(
  `[${backend}] ${streams} concurrent open streams: ${completed} completed, ${errors} errors, all done in ${
    fmt(performance.now() - opened)
  } ` +
    `(each held ≥ 4 s by the model)`
)

await server.close()
await llm.close()
process.exit(0)
