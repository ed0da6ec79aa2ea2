/**
 * Each provider family through Cairn against calling its fixture directly, in one run, and the cost
 * of a 20-turn Claude conversation with and without prompt caching.
 *
 *   npx tsx bench/providerFamilies.ts [--calls N] [--turns N] [--backend pglite|postgres]
 *
 * Part 1: for OpenAI-compatible, Anthropic and Gemini, N blocking completions of the same prompt,
 * interleaved (direct to the fixture, then through `POST /api/v1/llm/completions`, rotating):
 * median latency of each path, the added latency and its ratio, and Cairn's CPU per call (from
 * /proc, the server being a child process). The fixtures run in this process, so their CPU is not
 * Cairn's.
 *
 * Part 2: a conversation of N turns through `/chat` with a long system prompt on
 * `anthropic/claude-sonnet-4-5` (shipped prices: $3 in, $15 out, $0.30 cache read, $3.75 cache
 * write per million), once with PROMPT_CACHING on and once off, each on a fresh server; the cost is
 * the usage report's. The fixture counts words as tokens and caches as Anthropic documents it,
 * with Anthropic's 1,024-token minimum.
 */
import * as crypto from "node:crypto"
import * as http from "node:http"
import { type FakeAnthropic, startFakeAnthropic } from "../test/fixtures/fakeAnthropic.ts"
import { type FakeGemini, startFakeGemini } from "../test/fixtures/fakeGemini.ts"
import { type FakeLlm, startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { API_KEY, type ChildServer, spawnServer } from "../test/support/server.ts"
import { cpuMs, loadAverage } from "./proc.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const CALLS = Number(arg("calls", "600"))
const TURNS = Number(arg("turns", "20"))
const BACKEND = arg("backend", "pglite") as Backend
const WARMUP = 50

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })

/** One POST over keep-alive; answers the elapsed ms and the body. */
const post = (url: string, body: unknown, headers: Record<string, string>) =>
  new Promise<{ ms: number; status: number; body: string }>((resolve, reject) => {
    const payload = JSON.stringify(body)
    const started = performance.now()
    const request = http.request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => (text += chunk))
      response.on("end", () => resolve({ ms: performance.now() - started, status: response.statusCode ?? 0, body: text }))
    })
    request.on("error", reject)
    request.end(payload)
  })

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

interface Family {
  readonly name: string
  readonly model: string
  readonly direct: () => Promise<{ ms: number; status: number }>
}

const prompt = "Say hello in five words."

const families = (llm: FakeLlm, claude: FakeAnthropic, gemini: FakeGemini): ReadonlyArray<Family> => [
  {
    name: "OpenAI-compatible",
    model: "fake-model",
    direct: () =>
      post(`${llm.url}/chat/completions`, { model: "fake-model", messages: [{ role: "user", content: prompt }] }, {
        authorization: "Bearer sk-bench"
      })
  },
  {
    name: "Anthropic",
    model: "anthropic/claude-fake",
    direct: () =>
      post(`${claude.url}/v1/messages`, { model: "claude-fake", max_tokens: 4096, messages: [{ role: "user", content: prompt }] }, {
        "x-api-key": "sk-ant-bench",
        "anthropic-version": "2023-06-01"
      })
  },
  {
    name: "Gemini",
    model: "gemini/gemini-fake",
    direct: () =>
      post(`${gemini.url}/v1beta/models/gemini-fake:generateContent`, { contents: [{ role: "user", parts: [{ text: prompt }] }] }, {
        "x-goog-api-key": "gk-bench"
      })
  }
]

const environment = (llm: FakeLlm, claude: FakeAnthropic, gemini: FakeGemini, extra: Record<string, string> = {}) => ({
  OPENAI_BASE_URL: llm.url,
  OPENAI_API_KEY: "sk-bench",
  DEFAULT_MODEL: "fake-model",
  ANTHROPIC_API_KEY: "sk-ant-bench",
  ANTHROPIC_BASE_URL: claude.url,
  GEMINI_API_KEY: "gk-bench",
  GEMINI_BASE_URL: gemini.url,
  LOG_LEVEL: "warning",
  RATE_LIMIT_ENABLED: "false",
  ...extra
})

const proxied = (server: ChildServer, model: string) =>
  post(`${server.baseUrl}/api/v1/llm/completions`, { model, messages: [{ role: "user", content: prompt }] }, {
    authorization: `Bearer ${API_KEY}`
  })

const overhead = async (llm: FakeLlm, claude: FakeAnthropic, gemini: FakeGemini) => {
  const db = await createTestDatabase(BACKEND)
  const server = await spawnServer(db, environment(llm, claude, gemini))
  try {
    console.log(`Part 1: ${CALLS} blocking calls per path, ${BACKEND}, load ${loadAverage()}`)
    console.log("  family               direct ms   through Cairn ms   added ms   ratio   Cairn CPU/call")
    for (const family of families(llm, claude, gemini)) {
      for (let i = 0; i < WARMUP; i++) {
        await family.direct()
        const warm = await proxied(server, family.model)
        if (warm.status !== 200) throw new Error(`${family.name}: ${warm.status} ${warm.body}`)
      }
      const direct: Array<number> = []
      const through: Array<number> = []
      // The server's CPU over the whole loop (it does nothing for the direct calls): /proc counts in 10 ms ticks.
      const before = cpuMs(server.process.pid)
      for (let i = 0; i < CALLS; i++) {
        // Rotating which path goes first, so neither always meets a warmer machine.
        const first = i % 2 === 0
        if (first) direct.push((await family.direct()).ms)
        through.push((await proxied(server, family.model)).ms)
        if (!first) direct.push((await family.direct()).ms)
      }
      const cairnCpu = cpuMs(server.process.pid) - before
      const d = median(direct)
      const t = median(through)
      console.log(
        `  ${family.name.padEnd(20)} ${d.toFixed(3).padStart(9)} ${t.toFixed(3).padStart(18)} ${(t - d).toFixed(3).padStart(10)} ${
          (t / d).toFixed(2).padStart(7)
        } ${((cairnCpu / CALLS) * 1000).toFixed(0).padStart(12)} µs`
      )
    }
  } finally {
    await server.stop()
    await db.drop()
  }
}

/** A system prompt of about 2,000 words: a bot's instructions and reference material. */
const longSystemPrompt = Array.from({ length: 200 }, (_, i) => `Rule ${i + 1}: answer plainly and cite the handbook section.`).join(
  " "
)

const conversationCost = async (llm: FakeLlm, claude: FakeAnthropic, gemini: FakeGemini, caching: boolean) => {
  claude.reset()
  claude.setDefaultReply({ echo: true, text: "Noted, here is my answer about" })
  const db = await createTestDatabase(BACKEND)
  const server = await spawnServer(db, environment(llm, claude, gemini, { PROMPT_CACHING: caching ? "true" : "false" }))
  try {
    const auth = { authorization: `Bearer ${API_KEY}` }
    const bot = await post(`${server.baseUrl}/api/v1/admin/bots`, {
      id: "handbook",
      name: "Handbook",
      model: "anthropic/claude-sonnet-4-5",
      system_prompt: longSystemPrompt
    }, auth)
    if (bot.status !== 201) throw new Error(`bot: ${bot.status} ${bot.body}`)
    const from = new Date(Date.now() - 1000).toISOString()
    const sessionId = crypto.randomUUID()
    for (let turn = 1; turn <= TURNS; turn++) {
      const answer = await post(`${server.baseUrl}/chat`, {
        bot_id: "handbook",
        client_id: "bench",
        session_id: sessionId,
        message: `Question ${turn}: what does the handbook say about topic ${turn}?`
      }, auth)
      if (answer.status !== 200) throw new Error(`turn ${turn}: ${answer.status} ${answer.body}`)
    }
    // Usage is written behind; the report flushes what is queued first.
    const report = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        http.get(`${server.baseUrl}/api/v1/admin/usage?from=${encodeURIComponent(from)}`, { headers: auth }, (response) => {
          let text = ""
          response.on("data", (chunk) => (text += chunk))
          response.on("end", () => resolve(text))
        }).on("error", reject)
      })
    )
    return report.by_model.find((row: { model: string }) => row.model === "claude-sonnet-4-5")
  } finally {
    await server.stop()
    await db.drop()
  }
}

const main = async () => {
  const llm = await startFakeLlm({ record: false })
  const claude = await startFakeAnthropic({ record: false, minCacheTokens: 1024 })
  const gemini = await startFakeGemini({ record: false })
  try {
    await overhead(llm, claude, gemini)
    console.log(`Part 2: a ${TURNS}-turn conversation on anthropic/claude-sonnet-4-5, system prompt of ~2,000 words`)
    const rows = { on: await conversationCost(llm, claude, gemini, true), off: await conversationCost(llm, claude, gemini, false) }
    for (const [label, row] of Object.entries(rows)) {
      console.log(
        `  caching ${
          label.padEnd(3)
        }: prompt ${row.prompt_tokens} tokens (cache read ${row.cache_read_tokens}, write ${row.cache_write_tokens}), completion ${row.completion_tokens}, cost $${
          row.cost_usd.toFixed(4)
        }`
      )
    }
    console.log(`  cost with caching / without: ${(rows.on.cost_usd / rows.off.cost_usd).toFixed(3)}`)
  } finally {
    agent.destroy()
    await Promise.all([llm.close(), claude.close(), gemini.close()])
  }
}

await main()
