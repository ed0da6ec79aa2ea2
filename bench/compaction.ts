/**
 * Compaction time for a 200-message session, with the fake LLM answering at once: the admin's
 * compact (read the history, cut it, write the summary's transcript, the model call, store the
 * version) of a session of 200 injected messages of about 60 words, against a plain `/chat` turn
 * on a new session (the baseline), interleaved. The window is 12,000 tokens with 1,000 reserved, so
 * the newest 4,400 tokens stay and the rest (about three quarters) is summarised.
 *
 *   npx tsx bench/compaction.ts [pglite|postgres] [rounds=20] [messages=200]
 */
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { startServer } from "../test/support/server.ts"
import { median, sentence } from "./corpus.ts"

const backend = (process.argv[2] ?? "pglite") as "pglite" | "postgres"
const rounds = Number(process.argv[3] ?? 20)
const messages = Number(process.argv[4] ?? 200)

const llm = await startFakeLlm({ record: false, defaultReply: { text: JSON.stringify({ title: "Bench", summary: sentence(150) }) } })
const server = await startServer({
  backend,
  env: {
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-bench",
    DEFAULT_MODEL: "fake-model",
    LOG_LEVEL: "error",
    CONTEXT_WINDOW: "12000",
    ANSWER_RESERVE_TOKENS: "1000"
  }
})
const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" }
const post = async (path: string, body: unknown) => {
  const response = await fetch(`${server.baseUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) })
  if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
  return (await response.json()) as any
}
/** A session of `messages` injected user messages of about 60 words (no runs: nothing compacts them meanwhile). */
const session = async (name: string) => {
  const { session_id: sessionId } = await post("/api/v1/sessions", { client_id: name, bot_id: "default" })
  for (let i = 0; i < messages; i++) await post(`/api/v1/sessions/${sessionId}/messages`, { content: sentence(60) })
  return sessionId as string
}
const timed = async (call: () => Promise<unknown>) => {
  const started = performance.now()
  await call()
  return performance.now() - started
}

const compactMs: Array<number> = []
const turnMs: Array<number> = []
for (let i = 0; i < rounds + 2; i++) {
  const a = await session(`compact-${i}`)
  const compact = await timed(() => post(`/api/v1/admin/sessions/${a}/compact`, {}))
  const turn = await timed(() => post("/chat", { message: "and now?", client_id: `turn-${i}` }))
  if (i >= 2) {
    compactMs.push(compact)
    turnMs.push(turn)
  }
}
console.log(`compaction (${backend}), ${messages}-message sessions, ${rounds} rounds`)
const last = await fetch(`${server.baseUrl}/api/v1/admin/sessions/${await session("probe")}/compact`, {
  method: "POST",
  headers,
  body: "{}"
}).then((r) => r.json() as Promise<any>)
console.log(`a compaction summarises messages ${last.from_seq}..${last.through_seq} of the session`)
console.log(
  `| ${backend} | turn ${median(turnMs).toFixed(1)} ms | compact ${median(compactMs).toFixed(1)} ms | ${
    (median(compactMs) / median(turnMs)).toFixed(2)
  }x |`
)
await server.close()
await llm.close()
process.exit(0)
