/**
 * The messaging bridge against a fake chat server that speaks the BlueBubbles API (REST, webhooks,
 * Socket.IO), on both databases, through HTTP: every row of the routing table, wake words from each
 * source, dedup (also across a restart), updated-message, string isFromMe, echoes, stale and empty
 * messages, pause, the webhook token, a send that timed out but was delivered, catch-up after
 * downtime, diagnose, simulate, test-send, the HUD, outbound-only delivery, long replies, the circuit
 * breaker, cancelling queued runs, and the legacy Socket.IO client.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeChatServer, type IncomingOptions, startFakeChatServer } from "../fixtures/chatServer.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const TOKEN = "webhook-token-0123456789"
const CHAT = "iMessage;-;+15550001"
const REPLY = "Hello from the bot"

describe.each(backends)("the messaging bridge (%s)", (backend) => {
  let chat: FakeChatServer
  let llm: FakeLlm
  let db: TestDatabase
  let server: TestServer
  let every: string
  let mention: string

  const env = { LLM_MAX_RETRIES: "0", DISPATCH_RETRY_BASE_MS: "200", TASK_POLL_MS: "50" }
  const start = async () => {
    server = await startServer({
      backend,
      db,
      env: { ...env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test-fake-key-1234567890", DEFAULT_MODEL: "fake-model" }
    })
  }
  const healthWorker = async () =>
    ((await json(await server.request("/api/v1/admin/integrations/msgbridge/workers"))).workers as Array<any>).find((w) =>
      w.name === "health"
    )
  /**
   * Saves settings. A save restarts the bridge's health worker, whose first act is a catch-up: unless
   * told not to (a save it cannot run with), this waits for that catch-up, so a message the test sends
   * next is not taken by it (the webhook would then answer `duplicate`, rightly, but not what the test checks).
   */
  const putSettings = async (values: Record<string, unknown>, { caughtUp = true } = {}) => {
    const before = (await healthWorker())?.started_at ?? null
    const response = await server.request("/api/v1/admin/integrations/msgbridge/settings", { method: "PUT", body: JSON.stringify(values) })
    expect(response.status).toBe(200)
    if (!caughtUp) return
    await waitFor(async () => {
      const worker = await healthWorker()
      const caught = worker?.detail?.last_catch_up_at
      return worker?.state === "running" && worker.started_at !== before && typeof caught === "string" &&
          Date.parse(caught) >= Date.parse(worker.started_at)
        ? true
        : undefined
    }, "the health worker restarted by the save and its catch-up")
  }
  const makeChannel = async (name: string, requireMention: boolean) =>
    (await json(
      await server.request("/api/v1/admin/channels", {
        method: "POST",
        body: JSON.stringify({ name, bot_id: "default", require_mention: requireMention })
      })
    )).id as string
  const bind = async (channelId: string, chatGuid: string, extra: Record<string, unknown> = {}) => {
    const response = await server.request(`/api/v1/channels/${channelId}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "msgbridge", client_id: `msgbridge:${chatGuid}`, ...extra })
    })
    expect(response.status).toBe(201)
    return (await json(response)).id as string
  }
  const hookUrl = (token: string | null = TOKEN) =>
    `${server.baseUrl}/integrations/msgbridge/webhook${token === null ? "" : `?token=${token}`}`
  /** A message arrives on the chat server, which sends its webhook. */
  const say = async (text: string, options: Partial<IncomingOptions> = {}) => {
    const message = chat.receive({ chatGuid: CHAT, text, ...options })
    const answer = await chat.webhook(hookUrl(), "new-message", message)
    return { message, ...answer }
  }
  const sentTo = (chatGuid: string) => chat.sends().filter((s) => s.chatGuid === chatGuid)
  const messagesOf = async (channelId: string) => {
    const channel = await json(await server.request(`/api/v1/channels/${channelId}`))
    if (!channel.active_session_id) return []
    return (await json(await server.request(`/api/v1/sessions/${channel.active_session_id}/messages`))) as Array<
      { role: string; content: string; metadata: any }
    >
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 400))
  /** Waits until no run asks the LLM anything for a while (the earlier tests' runs are done). */
  const quiet = async () => {
    let last = -1
    while (llm.requestsTo("/v1/chat/completions").length !== last) {
      last = llm.requestsTo("/v1/chat/completions").length
      await new Promise((resolve) => setTimeout(resolve, 700))
    }
  }

  beforeAll(async () => {
    chat = await startFakeChatServer()
    llm = await startFakeLlm({ defaultReply: { text: REPLY } })
    db = await createTestDatabase(backend)
    await start()
    await putSettings({
      MSGBRIDGE_SERVER_URL: chat.url,
      MSGBRIDGE_PASSWORD: chat.password,
      MSGBRIDGE_WEBHOOK_TOKEN: TOKEN,
      MSGBRIDGE_HEALTH_INTERVAL_SECONDS: "1",
      MSGBRIDGE_SEND_TIMEOUT_MS: "1000"
    })
    every = await makeChannel("every message", false)
    mention = await makeChannel("on mention", true)
    await bind(every, CHAT)
    await bind(mention, CHAT, { wake_words: ["Jeeves"], use_bot_wake_word: true })
    await waitFor(
      async () => (await json(await server.request("/integrations/msgbridge/hud/status"))).connection === "connected" || undefined,
      "the bridge connected"
    )
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    await chat?.close()
  })

  it("follows the routing table on every bound channel, with wake words from each source", async () => {
    await putSettings({ MSGBRIDGE_WAKE_WORDS: "computer, butler" })
    const plain = await say("what's for dinner?")
    expect(plain.status).toBe(200)
    expect(plain.body).toMatchObject({ status: "triggered", guid: plain.message.guid })
    const byChannel = (body: any) => Object.fromEntries(body.channels.map((c: any) => [c.channel_id, c]))
    expect(byChannel(plain.body)[every]).toMatchObject({ action: "run", reason: "every-message" })
    expect(byChannel(plain.body)[mention]).toMatchObject({ action: "store", reason: "no-wake-word" })

    const cases = [
      ["hey JEEVES, lights please", "Jeeves"], // the binding's own word
      ["Computer: what time is it", "computer"], // MSGBRIDGE_WAKE_WORDS
      ["ask default about it", "default"] // the bot's id (use_bot_wake_word)
    ] as const
    for (const [text, word] of cases) {
      const { body } = await say(text)
      expect(byChannel(body)[mention], text).toMatchObject({ action: "run", reason: "wake-word", wake_word: word })
    }
    // The account owner's own device always triggers, wake word or not (isFromMe as a string).
    const own = await say("note to self: buy milk", { isFromMe: "true" })
    expect(byChannel(own.body)[mention]).toMatchObject({ action: "run", reason: "own-device" })

    // 5 runs on `every`, 4 on `mention`: each answered once, in the chat.
    await waitFor(() => (sentTo(CHAT).length >= 9 ? true : undefined), "nine replies")
    await settle()
    expect(sentTo(CHAT)).toHaveLength(9)
    expect(sentTo(CHAT).every((s) => s.message === REPLY && s.method === "apple-script" && s.tempGuid?.startsWith("cairn-"))).toBe(true)
    const stored = (await messagesOf(mention)).find((m) => m.content === "what's for dinner?")
    expect(stored?.metadata).toMatchObject({ passive: true, msgbridge_guid: plain.message.guid })

    expect((await chat.webhook(hookUrl(), "new-message", chat.receive({ chatGuid: "iMessage;-;+15559999", text: "hi" }))).body).toEqual({
      status: "ignored",
      reason: "unbound",
      guid: expect.any(String)
    })
    await putSettings({ MSGBRIDGE_WAKE_WORDS: null })
  })

  it("answers a message once: replays, updated-message, its own echo, stale and empty messages", async () => {
    const before = sentTo(CHAT).length
    const first = await say("one answer only please")
    expect(first.body.status).toBe("triggered")
    expect((await chat.webhook(hookUrl(), "new-message", first.message)).body).toMatchObject({ status: "ignored", reason: "duplicate" })
    expect(
      (await chat.webhook(hookUrl(), "updated-message", {
        ...first.message,
        attachments: [{ guid: "a", transferName: "photo.heic", mimeType: "image/heic", totalBytes: 10 }]
      })).body
    ).toMatchObject({
      status: "ignored",
      reason: "event-type"
    })
    await waitFor(() => (sentTo(CHAT).length >= before + 1 ? true : undefined), "the reply")
    // The reply comes back as the account's own message: with its tempGuid, and (apple-script) without.
    const reply = chat.messages().filter((m) => m.isFromMe === true).at(-1)!
    expect((await chat.webhook(hookUrl(), "new-message", reply)).body).toMatchObject({ status: "ignored", reason: "echo" })
    const bare = chat.receive({ chatGuid: CHAT, text: REPLY, isFromMe: true })
    expect((await chat.webhook(hookUrl(), "new-message", bare)).body).toMatchObject({ status: "ignored", reason: "echo" })

    expect((await say("from last week", { dateCreated: Date.now() - 7 * 24 * 3_600_000 })).body).toMatchObject({
      status: "ignored",
      reason: "stale"
    })
    expect((await say("   ")).body).toMatchObject({ status: "ignored", reason: "empty" })
    await settle()
    expect(sentTo(CHAT)).toHaveLength(before + 1)
  })

  it("refuses a wrong or missing token, answers malformed bodies with 422, and stores nothing while paused", async () => {
    const message = chat.receive({ chatGuid: CHAT, text: "let me in" })
    for (const token of ["wrong-token", null]) {
      const answer = await chat.webhook(hookUrl(token), "new-message", message)
      expect(answer.status).toBe(401)
      expect(answer.body).toEqual({ detail: "Invalid or missing webhook token" })
    }
    const raw = (body: string) => fetch(hookUrl(), { method: "POST", headers: { "content-type": "application/json" }, body })
    expect((await raw("not json")).status).toBeLessThan(500)
    expect((await raw(JSON.stringify({ data: {} }))).status).toBe(422)
    const malformed = await raw(JSON.stringify({ type: "new-message", data: { text: "x", chats: "nope" } }))
    expect(malformed.status).toBe(422)
    expect((await json(malformed)).detail[0]).toMatchObject({ loc: ["body", "data"] })
    // Without a GUID (the spec's field list has none) a message is handled under an id derived from it.
    const noGuid = await raw(JSON.stringify({ type: "new-message", data: { text: "", chats: [{ guid: CHAT }] } }))
    expect(noGuid.status).toBe(200)
    expect(await json(noGuid)).toMatchObject({ status: "ignored", reason: "empty", guid: expect.stringMatching(/^derived:/) })

    expect((await server.request("/integrations/msgbridge/pause", { method: "POST" })).status).toBe(200)
    const count = (await messagesOf(every)).length
    expect((await say("are you there?")).body).toEqual({ status: "ignored", reason: "paused" })
    expect((await json(await server.request("/integrations/msgbridge/hud/status"))).items[0].badge).toEqual({
      state: "paused",
      label: "Paused"
    })
    expect((await server.request("/integrations/msgbridge/resume", { method: "POST" })).status).toBe(200)
    await settle()
    expect((await messagesOf(every)).length).toBe(count)
    // The webhook is the only public route: the others need a key.
    expect((await server.request("/integrations/msgbridge/pause", { method: "POST", auth: null })).status).toBe(401)
  })

  it("does not send twice when a send timed out but was delivered; sends again when it was not", async () => {
    const quiet = "iMessage;-;+15550002"
    const channel = await makeChannel("quiet", false)
    await bind(channel, quiet)
    // Hangs past MSGBRIDGE_SEND_TIMEOUT_MS (1 s), delivered all the same.
    chat.failNextSends(1, { hangMs: 1500, deliver: true })
    await chat.webhook(hookUrl(), "new-message", chat.receive({ chatGuid: quiet, text: "first" }))
    await waitFor(
      () => (chat.messages().filter((m) => m.isFromMe === true && m.chats[0]!.guid === quiet).length >= 1 ? true : undefined),
      "the delivered reply"
    )
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(sentTo(quiet)).toHaveLength(1)
    expect(chat.messages().filter((m) => m.isFromMe === true && m.chats[0]!.guid === quiet)).toHaveLength(1)

    // Fails at once and was not delivered: the dispatcher's retry sends it.
    chat.failNextSends(1, { hangMs: 0, deliver: false })
    await chat.webhook(hookUrl(), "new-message", chat.receive({ chatGuid: quiet, text: "second" }))
    await waitFor(
      () => (chat.messages().filter((m) => m.isFromMe === true && m.chats[0]!.guid === quiet).length >= 2 ? true : undefined),
      "the retried reply",
      30_000
    )
    await settle()
    expect(sentTo(quiet)).toHaveLength(3)
    expect(chat.messages().filter((m) => m.isFromMe === true && m.chats[0]!.guid === quiet)).toHaveLength(2)
  })

  it("sends to a chat nothing came from, splitting a long reply; the circuit breaker stops a runaway chat", async () => {
    const outbound = "iMessage;-;+15550003"
    const { session_id } = await json(
      await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "hello", client_id: "outbound-test" }) })
    )
    const long = Array.from({ length: 12 }, (_, i) => `Sentence number ${i + 1} of a long reply.`).join(" ")
    await putSettings({ MSGBRIDGE_MAX_MESSAGE_CHARS: "200" })
    llm.script({ text: long })
    const injected = await server.request(`/api/v1/sessions/${session_id}/messages`, {
      method: "POST",
      body: JSON.stringify({
        content: "write a long reply",
        run_agent: true,
        notify: true,
        dispatch_type: "msgbridge",
        dispatch_config: { chat_guid: outbound }
      })
    })
    expect(injected.status).toBeLessThan(300)
    await waitFor(() => (sentTo(outbound).length >= 3 ? true : undefined), "the long reply")
    const parts = sentTo(outbound).map((s) => s.message)
    expect(parts.every((p) => p.length <= 200)).toBe(true)
    expect(parts.join(" ")).toBe(long)
    await putSettings({ MSGBRIDGE_MAX_MESSAGE_CHARS: null })

    const busy = "iMessage;-;+15550004"
    await bind(await makeChannel("busy", false), busy)
    await putSettings({ MSGBRIDGE_REPLY_LIMIT: "2" })
    try {
      const answers = []
      for (const n of [1, 2, 3]) {
        answers.push((await chat.webhook(hookUrl(), "new-message", chat.receive({ chatGuid: busy, text: `again ${n}` }))).body)
      }
      expect(answers.map((a) => a.status)).toEqual(["triggered", "triggered", "ignored"])
      expect(answers[2]).toMatchObject({ reason: "circuit-open" })
    } finally {
      // The later tests' chats must not run under this limit, whatever happened here.
      await putSettings({ MSGBRIDGE_REPLY_LIMIT: null })
    }
  })

  it("simulates without running, test-sends, and shows the connection in the HUD by preset", async () => {
    await quiet()
    const before = llm.requestsTo("/v1/chat/completions").length
    const count = (await messagesOf(mention)).length
    const trace = await json(
      await server.request("/integrations/msgbridge/simulate-webhook", {
        method: "POST",
        body: JSON.stringify({ chat_guid: CHAT, text: "hi jeeves" })
      })
    )
    expect(trace.status).toBe("triggered")
    expect(trace.channels).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel_id: every, action: "run", reason: "every-message" }),
        expect.objectContaining({ channel_id: mention, action: "run", reason: "wake-word", wake_word: "Jeeves" })
      ])
    )
    expect(
      await json(
        await server.request("/integrations/msgbridge/simulate-webhook", {
          method: "POST",
          body: JSON.stringify({ chat_guid: "nobody", text: "x" })
        })
      )
    ).toMatchObject({ status: "ignored", reason: "unbound" })
    expect(
      (await server.request("/integrations/msgbridge/simulate-webhook", { method: "POST", body: JSON.stringify({ text: "x" }) })).status
    ).toBe(422)
    await settle()
    expect(llm.requestsTo("/v1/chat/completions").length).toBe(before)
    expect((await messagesOf(mention)).length).toBe(count)

    const sent = await server.request(
      `/integrations/msgbridge/test-send?chat_guid=${encodeURIComponent("iMessage;-;+15550005")}&text=ping`,
      { method: "POST" }
    )
    expect(await json(sent)).toMatchObject({ status: "sent", parts: 1 })
    expect(sentTo("iMessage;-;+15550005").map((s) => s.message)).toEqual(["ping"])

    const hud = async (query = "") => json(await server.request(`/integrations/msgbridge/hud/status${query}`))
    expect(await hud()).toMatchObject({
      connection: "connected",
      paused: false,
      items: [{
        id: "bb-status",
        kind: "status",
        badge: { state: "connected" },
        actions: [{ id: "pause", method: "POST", path: "/integrations/msgbridge/pause" }],
        refresh_seconds: 30
      }]
    })
    chat.setServerInfo({ helperConnected: false })
    expect((await hud()).connection).toBe("degraded")
    chat.setServerInfo({ helperConnected: true })
    const quietChannel = await makeChannel("no hud", false)
    await bind(quietChannel, "iMessage;-;+15550006", { hud_preset: "none" })
    expect(await hud(`?channel_id=${quietChannel}`)).toMatchObject({ preset: "none", items: [] })
    expect((await hud(`?channel_id=${every}`)).items).toHaveLength(1)
  })

  it("diagnoses each check, and fails each when its cause is removed", async () => {
    const diagnose = async () => json(await server.request("/integrations/msgbridge/diagnose"))
    expect(await diagnose()).toEqual({
      status: "ok",
      ready: true,
      checks: { meta: "pass", dispatcher: "pass", credentials: "pass", bindings: "pass" },
      issues: []
    })
    await putSettings({ MSGBRIDGE_PASSWORD: "wrong" }, { caughtUp: false })
    expect(await diagnose()).toMatchObject({
      status: "failing",
      checks: { credentials: "fail" },
      issues: [expect.stringMatching(/refused MSGBRIDGE_PASSWORD/)]
    })
    await putSettings({ MSGBRIDGE_PASSWORD: chat.password, MSGBRIDGE_WEBHOOK_TOKEN: null }, { caughtUp: false })
    expect(await diagnose()).toMatchObject({ checks: { credentials: "fail" }, issues: [expect.stringMatching(/MSGBRIDGE_WEBHOOK_TOKEN/)] })
    await putSettings({ MSGBRIDGE_WEBHOOK_TOKEN: TOKEN })
    expect((await diagnose()).ready).toBe(true)
  })

  it("catches up on messages sent while Cairn was down, answering each once, also after a restart", async () => {
    const away = "iMessage;-;+15550007"
    const awayChannel = await makeChannel("away", false)
    await bind(awayChannel, away)
    const replayed = await chat.webhook(hookUrl(), "new-message", chat.receive({ chatGuid: away, text: "before the restart" }))
    expect(replayed.body.status).toBe("triggered")
    await waitFor(() => (sentTo(away).length >= 1 ? true : undefined), "the first reply")
    await server.close()
    const missed = [
      chat.receive({ chatGuid: away, text: "sent while down 1" }),
      chat.receive({ chatGuid: away, text: "sent while down 2" })
    ]
    await start()
    await waitFor(() => (sentTo(away).length >= 3 ? true : undefined), "the missed messages answered", 30_000)
    // The chat server comes back from an outage: another catch-up, nothing answered twice.
    chat.setDown(true)
    await waitFor(
      async () => ((await json(await server.request("/integrations/msgbridge/hud/status"))).connection === "disconnected"
        ? true
        : undefined),
      "down"
    )
    await new Promise((resolve) => setTimeout(resolve, 1500)) // the health worker's ping sees it too
    chat.setDown(false)
    await waitFor(
      async () => ((await json(await server.request("/integrations/msgbridge/hud/status"))).connection === "connected" ? true : undefined),
      "up"
    )
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(sentTo(away)).toHaveLength(3)
    const stored = await messagesOf(awayChannel)
    for (const m of missed) expect(stored.filter((s) => s.role === "user" && s.content === m.text)).toHaveLength(1)
    expect(stored.filter((s) => s.role === "assistant")).toHaveLength(3)
    // A webhook replayed after the restart is still a duplicate (the GUID set was reloaded).
    expect((await chat.webhook(hookUrl(), "new-message", missed[0])).body).toMatchObject({ reason: "duplicate" })
  })

  it("cancels the bridge's queued runs", async () => {
    const slow = "iMessage;-;+15550008"
    await bind(await makeChannel("slow", false), slow)
    llm.script({ text: "slow answer", delayMs: 1500 })
    const asked = llm.requestsTo("/v1/chat/completions").length
    for (const n of [1, 2, 3]) await chat.webhook(hookUrl(), "new-message", chat.receive({ chatGuid: slow, text: `queue ${n}` }))
    // The first is running (its model call made); the other two wait behind it.
    await waitFor(() => (llm.requestsTo("/v1/chat/completions").length > asked ? true : undefined), "the first run's model call")
    const cancelled = await json(await server.request("/integrations/msgbridge/cancel-pending-tasks", { method: "POST" }))
    expect(cancelled).toEqual({ status: "ok", cancelled: 2 })
    await waitFor(() => (sentTo(slow).length >= 1 ? true : undefined), "the running answer")
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(sentTo(slow)).toHaveLength(1)
  })

  it("the legacy Socket.IO client: bound chats by their binding, unbound ones with the default bot and global wake words", async () => {
    await waitFor(() => (chat.socketClients() > 0 ? true : undefined), "the legacy client connected")
    const connections = chat.socketConnections()
    await putSettings({ MSGBRIDGE_WAKE_WORDS: "robot" })
    // A settings change restarts the bridge's workers: wait for the new connection.
    await waitFor(
      () => (chat.socketConnections() > connections && chat.socketClients() > 0 ? true : undefined),
      "the legacy client reconnected"
    )
    const legacy = "iMessage;-;+15550010"
    chat.emit("new-message", chat.receive({ chatGuid: legacy, text: "no wake word here" }))
    const woken = chat.receive({ chatGuid: legacy, text: "hey Robot, what's up" })
    chat.emit("new-message", woken)
    chat.emit("new-message", woken) // delivered twice: answered once
    await waitFor(() => (sentTo(legacy).length >= 1 ? true : undefined), "the legacy answer")
    const bound = "iMessage;-;+15550011"
    await bind(await makeChannel("bound for socket", false), bound)
    chat.emit("new-message", chat.receive({ chatGuid: bound, text: "through the socket", isFromMe: false }))
    await waitFor(() => (sentTo(bound).length >= 1 ? true : undefined), "the bound answer")
    await settle()
    expect(sentTo(legacy)).toHaveLength(1)
    const sessions = await json(await server.request("/sessions"))
    expect(JSON.stringify(sessions)).toContain(`msgbridge:${legacy}`)
    await putSettings({ MSGBRIDGE_WAKE_WORDS: null })
  })
})

describe.each(backends)("the messaging bridge's diagnosis without its registrations (%s)", (backend) => {
  it("fails the meta and dispatcher checks when hooks.ts registers no metadata and dispatcher.ts is gone", async () => {
    // A copy of the bundled integration that overrides it (INTEGRATION_DIRS comes later), one level
    // under the project so its imports of ../../src/sdk still resolve.
    const root = path.resolve(`.tmp-msgbridge-${crypto.randomUUID()}`)
    const copy = path.join(root, "msgbridge")
    fs.cpSync(path.resolve("integrations/msgbridge"), copy, { recursive: true })
    fs.rmSync(path.join(copy, "dispatcher.ts"))
    const hooks = fs.readFileSync(path.join(copy, "hooks.ts"), "utf8")
    const withoutMeta = hooks.replace(/^\s*cairn\.registerMetadata\(.*\)\n\s*registered\.metadata = true\n/m, "\n")
    expect(withoutMeta).not.toBe(hooks)
    fs.writeFileSync(path.join(copy, "hooks.ts"), withoutMeta)
    const chat = await startFakeChatServer()
    const server = await startServer({
      backend,
      env: { INTEGRATION_DIRS: root, MSGBRIDGE_SERVER_URL: chat.url, MSGBRIDGE_PASSWORD: chat.password, MSGBRIDGE_WEBHOOK_TOKEN: TOKEN }
    })
    try {
      const diagnosis = await json(await server.request("/integrations/msgbridge/diagnose"))
      expect(diagnosis).toMatchObject({
        status: "failing",
        ready: false,
        checks: { meta: "fail", dispatcher: "fail", credentials: "pass", bindings: "fail" }
      })
      expect(diagnosis.issues).toEqual([
        expect.stringMatching(/metadata/),
        expect.stringMatching(/dispatcher/),
        expect.stringMatching(/No channel is bound/)
      ])
    } finally {
      await server.close()
      await chat.close()
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})
