/**
 * The messaging bridge's cost, against the fake chat server and a fake LLM answering at once:
 *
 * 1. Latency: from the chat server's webhook POST to its send arriving back at the chat server
 *    (webhook, routing, the run as a task, the dispatcher), against the same turn through
 *    `POST /chat` (blocking) on the same server: the difference is what the bridge adds. Interleaved,
 *    one at a time, each in its own chat and channel.
 * 2. Absorption: N webhooks fired at once (C in flight) into a chat whose channel requires a mention,
 *    so each is stored passively (no run); every answer must say `stored` and every message must be
 *    in the session (no loss). Against the same number of passive `POST /chat` messages at the same
 *    concurrency.
 *
 *   npx tsx bench/msgbridge.ts [pglite|postgres] [turns=60] [webhooks=1000] [concurrency=50]
 */
import { startFakeChatServer } from "../test/fixtures/chatServer.ts"
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { startServer } from "../test/support/server.ts"

const backend = (process.argv[2] ?? "pglite") as "pglite" | "postgres"
const turns = Number(process.argv[3] ?? 60)
const webhooks = Number(process.argv[4] ?? 1000)
const concurrency = Number(process.argv[5] ?? 50)
const TOKEN = "bench-token"

const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const p95 = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.95))]!

const llm = await startFakeLlm({ record: false, defaultReply: { text: "Noted." } })
const chat = await startFakeChatServer()
const server = await startServer({
  backend,
  env: {
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-bench",
    DEFAULT_MODEL: "fake-model",
    LOG_LEVEL: "error",
    MSGBRIDGE_SERVER_URL: chat.url,
    MSGBRIDGE_PASSWORD: chat.password,
    MSGBRIDGE_WEBHOOK_TOKEN: TOKEN,
    MSGBRIDGE_LEGACY_CLIENT: "false",
    // The bench sends many messages a minute into one chat: not a runaway.
    MSGBRIDGE_REPLY_LIMIT: "1000000"
  }
})
const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" }
const post = async (path: string, body: unknown): Promise<any> => {
  const response = await fetch(`${server.baseUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) })
  const json = await response.json()
  if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`)
  return json
}
const channel = async (name: string, requireMention: boolean, chatGuid: string) => {
  const { id } = await post("/api/v1/admin/channels", { name, bot_id: "default", require_mention: requireMention })
  await post(`/api/v1/channels/${id}/integrations`, { integration_type: "msgbridge", client_id: `msgbridge:${chatGuid}` })
  return id as string
}
const hook = `${server.baseUrl}/integrations/msgbridge/webhook?token=${TOKEN}`

// 1. Latency
const bridged: Array<number> = []
const direct: Array<number> = []
for (let i = 0; i < turns + 5; i++) {
  const chatGuid = `iMessage;-;+1555${String(i).padStart(6, "0")}`
  const channelId = await channel(`latency ${i}`, false, chatGuid)
  const arrived = chat.nextSend(chatGuid)
  const started = performance.now()
  const answer = await chat.webhook(hook, "new-message", chat.receive({ chatGuid, text: "Hi" }))
  if (answer.body.status !== "triggered") throw new Error(`webhook answered ${JSON.stringify(answer.body)}`)
  await arrived
  const viaBridge = performance.now() - started
  const directStarted = performance.now()
  await post("/chat", { message: "Hi", channel_id: channelId })
  const viaChat = performance.now() - directStarted
  if (i >= 5) {
    bridged.push(viaBridge)
    direct.push(viaChat)
  }
}

// 2. Absorption
const absorb = async (label: string, send: (i: number) => Promise<boolean>) => {
  let next = 0
  let failed = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < webhooks) {
        const i = next++
        if (!(await send(i))) failed += 1
      }
    })
  )
  const seconds = (performance.now() - started) / 1000
  return { label, perSecond: webhooks / seconds, failed }
}
const crowd = "iMessage;-;+15559000000"
const crowdChannel = await channel("crowd", true, crowd)
const viaWebhook = await absorb("webhooks (stored passively)", async (i) => {
  const answer = await chat.webhook(hook, "new-message", chat.receive({ chatGuid: crowd, text: `crowd ${i}` }))
  return answer.status === 200 && answer.body.status === "stored"
})
const passiveChannel = (await post("/api/v1/admin/channels", { name: "passive baseline", bot_id: "default", require_mention: true })).id
const viaChat = await absorb("POST /chat passive (baseline)", async (i) => {
  const response = await fetch(`${server.baseUrl}/chat`, {
    method: "POST",
    headers,
    body: JSON.stringify({ message: `passive ${i}`, channel_id: passiveChannel, passive: true })
  })
  await response.text()
  return response.status === 200
})
const stored = async (channelId: string, prefix: string) => {
  const { active_session_id } = (await (await fetch(`${server.baseUrl}/api/v1/channels/${channelId}`, { headers })).json()) as {
    active_session_id: string
  }
  const messages = (await (await fetch(`${server.baseUrl}/api/v1/sessions/${active_session_id}/messages`, { headers })).json()) as Array<
    { content: string }
  >
  return new Set(messages.filter((m) => m.content.startsWith(prefix)).map((m) => m.content)).size
}
const kept = await stored(crowdChannel, "crowd ")

console.log(`messaging bridge, ${backend}, fake LLM at 0 ms`)
console.log(`latency over ${turns} turns (median / p95):`)
console.log(`  POST /chat blocking (baseline)     ${median(direct).toFixed(2)} / ${p95(direct).toFixed(2)} ms`)
console.log(`  webhook -> reply at the chat server ${median(bridged).toFixed(2)} / ${p95(bridged).toFixed(2)} ms`)
console.log(
  `  added by the bridge (median)        ${(median(bridged) - median(direct)).toFixed(2)} ms, ratio ${
    (median(bridged) / median(direct)).toFixed(2)
  }x`
)
console.log(`absorption, ${webhooks} messages, ${concurrency} in flight:`)
for (const result of [viaChat, viaWebhook]) {
  console.log(`  ${result.label.padEnd(32)} ${result.perSecond.toFixed(0)}/s, ${result.failed} failed`)
}
console.log(`  ratio ${(viaWebhook.perSecond / viaChat.perSecond).toFixed(2)}x; webhook messages kept in the session: ${kept}/${webhooks}`)
await server.close()
await chat.close()
await llm.close()
process.exit(0)
