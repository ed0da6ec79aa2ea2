/**
 * The SDK's capabilities as an integration uses them (through its own routes), on both backends:
 * LLM completion and transcription with usage recorded under the integration; the channels bound
 * to it; passive messages; agent runs delivered through its own dispatcher; cancelling its queued
 * runs; workspace files of bound channels only; and the HTTP client's private-address guard and
 * retry rules against a real local server.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, tempDir } from "../support/database.ts"
import { waitFor, writeIntegration } from "../support/integrations.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { toneWav } from "../support/speech.ts"

const helper = {
  "setup.ts": `export const SETUP = { env_vars: [{ key: "HELPER_SERVER_URL", description: "A server the admin points the helper at" }] }\n`,
  "state.ts": `export const delivered: Array<unknown> = []\n`,
  "hooks.ts": `export default (cairn) => cairn.registerMetadata({ integration_type: "helper", client_id_prefix: "helper:" })\n`,
  "dispatcher.ts": `import { delivered } from "./state.ts"
export default (cairn) => cairn.registerDispatcher("helper", {
  deliver: async (task, result, clientActions, extraMetadata) => { delivered.push({ task_id: task.id, result, config: task.dispatch_config }) },
  postMessage: async (config, text, options) => true
})
`,
  "router.ts": `import { delivered } from "./state.ts"
const guarded = (f) => async (request, cairn) => {
  try {
    return await f(request.body ?? {}, cairn, request)
  } catch (error) {
    return { status: 400, body: { detail: error.message }, __response: true }
  }
}
const route = (method, path, f) => ({ method, path, description: path, handler: guarded(f) })
export default [
  route("POST", "/complete", (b, c) => c.llm.complete(b)),
  route("POST", "/transcribe", (b, c) => c.llm.transcribe({ audio: new Uint8Array(Buffer.from(b.audio, "base64")), fileName: "note.wav" })),
  route("GET", "/bound", async (_b, c, r) => ({ channels: await c.channels.bound(r.query.clientId ? { clientId: r.query.clientId } : undefined) })),
  route("POST", "/passive", (b, c) => c.channels.storePassive(b.channelId, b.content, { metadata: { from: "someone" } })),
  route("POST", "/run", (b, c) => c.runs.run(b)),
  route("POST", "/start", (b, c) => c.runs.start(b)),
  route("POST", "/cancel", async (b, c) => ({ cancelled: await c.runs.cancelQueued(b) })),
  route("POST", "/write", async (b, c) => { await c.channels.writeFile(b.channelId, b.path, b.content); return { written: true } }),
  route("POST", "/http", async (b, c) => {
    const response = await c.http.request(b.url, { method: b.method, retries: b.retries, json: b.json })
    return { status: response.status, text: response.text }
  }),
  route("GET", "/delivered", () => ({ delivered }))
]
`
}

describe.each(backends)("the integration SDK's capabilities (%s)", (backend) => {
  const dir = tempDir("cairn-sdk-")
  let llm: FakeLlm
  let server: TestServer
  let peer: http.Server
  let peerUrl: string
  const peerHits: Array<string> = []

  beforeAll(async () => {
    writeIntegration(dir, "helper", helper)
    llm = await startFakeLlm()
    // A plain HTTP server: GET /flaky fails once with 503, POST /flaky always.
    let flakyGets = 0
    peer = http.createServer((request, response) => {
      peerHits.push(`${request.method} ${request.url}`)
      if (request.url === "/flaky" && (request.method === "POST" || flakyGets++ === 0)) {
        response.writeHead(503).end("busy")
        return
      }
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ hello: "from the peer" }))
    })
    await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve))
    peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`
    server = await startServer({
      backend,
      env: {
        INTEGRATION_DIRS: dir,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "1",
        LLM_RETRY_BASE_MS: "10",
        TASK_POLL_MS: "50"
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
    await new Promise((resolve) => peer?.close(resolve))
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const call = async (path: string, body?: unknown) =>
    json(await server.request(`/integrations/helper${path}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) }))
  const post = (path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })

  const boundChannel = async (clientId: string) => {
    const channel = await json(await post("/api/v1/admin/channels", { name: `helper ${clientId}`, bot_id: "default" }))
    const binding = await post(`/api/v1/channels/${channel.id}/integrations`, {
      integration_type: "helper",
      client_id: clientId,
      wake_words: ["hey helper"],
      use_bot_wake_word: false,
      hud_preset: "none"
    })
    expect(binding.status).toBe(201)
    return channel.id as string
  }

  it("completes through the server's providers, in JSON mode when asked, and records usage under the integration", async () => {
    llm.script({ text: "plain answer", usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } })
    expect(await call("/complete", { messages: [{ role: "user", content: "hello" }], temperature: 0.2 })).toMatchObject({
      content: "plain answer",
      model: "fake-model",
      usage: { total_tokens: 9 }
    })
    llm.script({ text: "{\"risk\": \"low\", \"score\": 0.1}" })
    const judged = await call("/complete", { messages: [{ role: "user", content: "classify" }], json: true })
    expect(judged.json).toEqual({ risk: "low", score: 0.1 })
    const requests = llm.requestsTo("/v1/chat/completions")
    expect(requests.at(-2)!.body).toMatchObject({ temperature: 0.2 })
    expect(requests.at(-2)!.body.response_format).toBeUndefined()
    expect(requests.at(-1)!.body).toMatchObject({ response_format: { type: "json_object" } })

    // No JSON even when asked again (the second answer is the fake's default, "ok"): the call rejects.
    llm.script({ text: "not json at all" })
    expect(await call("/complete", { messages: [{ role: "user", content: "classify" }], json: true })).toEqual({
      detail: expect.stringMatching(/^The model's answer is not JSON/)
    })
    expect(llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages.at(-1).content).toMatch(/^Your answer was not the JSON asked for/)
    llm.script({ status: 400, errorBody: { error: { message: "bad request from the provider" } } })
    expect(await call("/complete", { messages: [{ role: "user", content: "x" }] })).toEqual({
      detail: expect.stringMatching(/LLM call failed \(invalid_request\)/)
    })
    expect(await call("/complete", { messages: [] })).toEqual({ detail: expect.stringMatching(/needs messages/) })

    llm.scriptTranscriptions({ text: "the spoken words" })
    expect(await call("/transcribe", { audio: Buffer.from(toneWav(0.5)).toString("base64") })).toEqual({ text: "the spoken words" })
    // Through the speech service, as /transcribe is: audio that is not what it says never reaches the engine.
    const refused = await call("/transcribe", { audio: Buffer.from("RIFF....WAVE").toString("base64") })
    expect(refused.detail, JSON.stringify(refused)).toMatch(/The WAV file cannot be read/)

    const usage = await json(await server.request("/api/v1/admin/usage"))
    const mine = usage.by_key.find((row: any) => row.principal_kind === "integration" && row.principal_id === "helper")
    expect(mine).toMatchObject({ calls: 6, errors: 1 })
    expect(mine.prompt_tokens).toBeGreaterThanOrEqual(7)
  })

  it("finds its bound channels with the binding's fields, and stores passive messages", async () => {
    const channelId = await boundChannel("helper:chat-1")
    const { channels } = await call("/bound")
    const entry = channels.find((c: any) => c.channel.id === channelId)
    expect(entry).toEqual({
      channel: expect.objectContaining({ id: channelId, bot_id: "default" }),
      binding: expect.objectContaining({
        integration_type: "helper",
        client_id: "helper:chat-1",
        wake_words: ["hey helper"],
        use_bot_wake_word: false,
        hud_preset: "none"
      })
    })
    expect((await call("/bound?clientId=helper:chat-1")).channels).toHaveLength(1)
    expect((await call("/bound?clientId=helper:nobody")).channels).toEqual([])

    const stored = await call("/passive", { channelId, content: "overheard in the group" })
    expect(stored).toEqual({ message_id: expect.any(String), session_id: expect.any(String) })
    const messages = await json(await server.request(`/api/v1/sessions/${stored.session_id}/messages`))
    expect(messages.at(-1)).toMatchObject({ role: "user", content: "overheard in the group", metadata: { passive: true, from: "someone" } })
    expect(await call("/passive", { channelId: "not-a-channel", content: "x" })).toEqual({ detail: "Channel not found: not-a-channel" })
  })

  it("runs the agent for a channel message and delivers the answer through its own dispatcher", async () => {
    const channelId = await boundChannel("helper:chat-2")
    llm.script({ text: "the bot's answer" })
    const result = await call("/run", {
      channelId,
      content: "hey helper, what's up?",
      dispatchConfig: { chat: "chat-2" },
      metadata: { external_id: "m-1" }
    })
    expect(result).toMatchObject({ status: "complete", result: "the bot's answer", error: null, task_id: expect.any(String) })
    const delivered = await waitFor(async () => {
      const list = (await call("/delivered")).delivered
      return list.find((d: any) => d.task_id === result.task_id)
    }, "the delivery")
    expect(delivered).toEqual({ task_id: result.task_id, result: "the bot's answer", config: { chat: "chat-2" } })
    const task = await json(await server.request(`/api/v1/tasks/${result.task_id}`))
    expect(task).toMatchObject({ source: "integration:helper", dispatch_type: "helper" })
    const messages = await json(await server.request(`/api/v1/sessions/${result.session_id}/messages`))
    expect(messages.find((m: any) => m.content === "hey helper, what's up?").metadata).toMatchObject({ external_id: "m-1" })
  })

  it("cancels only its own queued runs", async () => {
    const channelId = await boundChannel("helper:chat-3")
    expect((await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ SYSTEM_PAUSED: true }) })).status).toBe(
      200
    )
    try {
      const first = await call("/start", { channelId, content: "one" })
      await call("/start", { channelId, content: "two" })
      expect(await call("/cancel", { channelId })).toEqual({ cancelled: 2 })
      expect((await json(await server.request(`/api/v1/tasks/${first.task_id}`))).status).toBe("cancelled")
      expect(await call("/cancel", {})).toEqual({ cancelled: 0 })
    } finally {
      await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ SYSTEM_PAUSED: false }) })
    }
  })

  it("writes workspace files of its bound channels only, with the workspace's path rules", async () => {
    const channelId = await boundChannel("helper:chat-4")
    expect(
      (await server.request(`/api/v1/channels/${channelId}`, { method: "PATCH", body: JSON.stringify({ workspace_enabled: true }) })).status
    ).toBe(200)
    expect(await call("/write", { channelId, path: "data/inbox/2026-11-23-hello.md", content: "# Hello" })).toEqual({ written: true })
    const file = await json(await server.request(`/api/v1/channels/${channelId}/workspace/files/data/inbox/2026-11-23-hello.md`))
    expect(file.content).toBe("# Hello")
    expect(await call("/write", { channelId, path: "../escape.md", content: "x" })).toEqual({ detail: expect.any(String) })

    const other = await json(await post("/api/v1/admin/channels", { name: "not bound", bot_id: "default" }))
    expect(await call("/write", { channelId: other.id, path: "a.md", content: "x" })).toEqual({
      detail: `Channel ${other.id} is not bound to helper`
    })
  })

  it("refuses loopback and metadata addresses by default, allows the host of its own *_URL setting, and retries only idempotent calls", async () => {
    const before = peerHits.length
    expect(await call("/http", { url: `${peerUrl}/x` })).toEqual({
      detail: expect.stringMatching(/private or loopback address \(127\.0\.0\.1\)/)
    })
    expect(await call("/http", { url: "http://169.254.169.254/latest/meta-data/" })).toEqual({
      detail: expect.stringMatching(/169\.254\.169\.254/)
    })
    expect(await call("/http", { url: "file:///etc/passwd" })).toEqual({ detail: expect.stringMatching(/http or https/) })
    expect(peerHits.length).toBe(before)

    const saved = await server.request("/api/v1/admin/integrations/helper/settings", {
      method: "PUT",
      body: JSON.stringify({ HELPER_SERVER_URL: peerUrl })
    })
    expect(saved.status).toBe(200)
    expect(await call("/http", { url: `${peerUrl}/hello` })).toEqual({ status: 200, text: "{\"hello\":\"from the peer\"}" })
    // GET is retried after a 503; POST is not.
    expect(await call("/http", { url: `${peerUrl}/flaky` })).toMatchObject({ status: 200 })
    const posts = peerHits.filter((hit) => hit === "POST /flaky").length
    expect(await call("/http", { url: `${peerUrl}/flaky`, method: "POST", json: { a: 1 } })).toEqual({ status: 503, text: "busy" })
    expect(peerHits.filter((hit) => hit === "POST /flaky").length).toBe(posts + 1)
    expect(peerHits.filter((hit) => hit === "GET /flaky")).toHaveLength(2)
    // The allowance is that host only: the metadata address stays refused.
    expect(await call("/http", { url: "http://169.254.169.254/" })).toEqual({ detail: expect.stringMatching(/private or loopback/) })
  })
})
