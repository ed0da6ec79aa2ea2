/**
 * Conversations end to end against the fake LLM: blocking and streaming chat, tools, client tools,
 * approvals, cancel, passive, queueing, rejoin, fallback, rate-limit waits and secret warnings.
 * Calls go through the typed client; raw requests remain for the SSE streams (read frame by frame
 * as they arrive) and for "the secret is in no body".
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { ApprovalDecided } from "../../src/agent/Errors.ts"
import { foreignTool } from "../../src/agent/Tool.ts"
import { ToolRegistry } from "../../src/agent/Tools.ts"
import { CreateBot } from "../../src/bots/Model.ts"
import { CreateChannel } from "../../src/channels/Model.ts"
import { CancelRequest, ChatRequest } from "../../src/chat/Model.ts"
import { Forbidden, NotFound, ValidationError } from "../../src/contract/Errors.ts"
import { CreateSession } from "../../src/sessions/Model.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type CairnClient, withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { readSse, type SseEvent } from "../support/sse.ts"
import { waitFor } from "../support/time.ts"

const types = (events: ReadonlyArray<SseEvent>) => events.map((event) => event.data.type)

// What a caller sends, with the server's defaults filled in by the same schemas.
const chatRequest = withDefaults(ChatRequest)
const cancelRequest = withDefaults(CancelRequest)
const sessionRequest = withDefaults(CreateSession)
const botRequest = withDefaults(CreateBot)
const channelRequest = withDefaults(CreateChannel)

describe.each(backends)("chat (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let clientCounter = 0
  const client = () => `client-${++clientCounter}`

  const stream = async (body: Record<string, unknown>, auth?: string) => {
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify(body),
      signal: controller.signal,
      auth
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    return readSse(response, controller)
  }

  // The typed create succeeds only on the declared 201.
  const createBot = (bot: typeof CreateBot.Encoded) => server.call((client) => client.bots.create({ payload: botRequest(bot) }))

  /** A blocking /chat; the typed call succeeds only on the declared 200. */
  const chat = (body: typeof ChatRequest.Encoded) => server.call((client) => client.chat.chat({ payload: chatRequest(body) }))

  const messagesOf = (id: string) => server.call((client) => client.sessions.messages({ path: { id } }))

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "1",
        LLM_RETRY_BASE_MS: "10",
        CLIENT_TOOL_TIMEOUT_SECONDS: "10",
        TASK_POLL_MS: "50"
      }
    })
    await server.run(
      Effect.flatMap(ToolRegistry, (tools) =>
        Effect.all([
          tools.register(foreignTool({
            name: "explode",
            description: "Always fails",
            parameters: { type: "object", properties: {} },
            source: "test",
            execute: () => {
              throw new Error("the tool blew up")
            }
          })),
          tools.register(foreignTool({
            name: "add",
            description: "Adds a and b",
            parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
            source: "test",
            execute: (args) => String(Number(args.a) + Number(args.b))
          }))
        ]))
    )
    await createBot({
      id: "toolbot",
      name: "Tool Bot",
      tools: ["add", "explode", "current_time"],
      client_tools: [{ name: "get_location", description: "Where the user is" }],
      tool_policies: { current_time: "require_approval" }
    })
    await createBot({ id: "fallbackbot", name: "Fallback Bot", model: "fake-model", fallback_models: ["fake-model-2"] })
    await createBot({ id: "researcher", name: "Researcher", model: "fake-model-2", system_prompt: "You research." })
    await createBot({ id: "lead", name: "Lead", delegate_bots: ["researcher"] })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  it("answers a blocking /chat and stores both messages", async () => {
    llm.script({ text: "Hello there" })
    const body = await chat({ message: "Hi", client_id: client() })
    expect(body).toMatchObject({ response: "Hello there", transcript: "", client_actions: [] })
    const messages = await messagesOf(body.session_id)
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Hi"],
      ["assistant", "Hello there"]
    ])
    const sent = llm.requestsTo("/v1/chat/completions")[0]!.body
    expect(sent.model).toBe("fake-model")
    expect(sent.messages[0].role).toBe("system")
    expect(sent.messages.at(-1)).toMatchObject({ role: "user", content: "Hi" })
  })

  it("streams SSE frames whose data parse as JSON with a type, response last", async () => {
    llm.script({ text: "one two three" })
    const sse = await stream({ message: "Count", client_id: client() })
    const events = await sse.rest()
    for (const event of events) expect(typeof event.data.type).toBe("string")
    expect(events.at(-1)!.data.type).toBe("response")
    expect(events.at(-1)!.data).toMatchObject({ text: "one two three", tools_used: [], client_actions: [] })
    const texts = events.filter((e) => e.data.type === "assistant_text")
    expect(texts.length).toBeGreaterThan(1)
    expect(texts.at(-1)!.data.text).toBe("one two three")
    expect(texts.map((e) => e.data.delta).join("")).toBe("one two three")
    expect(types(events)).toContain("context_budget")
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1))
  })

  it("runs tools over several steps and reports each", async () => {
    llm.script(
      { toolCalls: [{ name: "add", arguments: JSON.stringify({ a: 2, b: 3 }) }] },
      { toolCalls: [{ name: "add", arguments: JSON.stringify({ a: 5, b: 10 }) }] },
      { text: "The total is 15" }
    )
    const sse = await stream({ message: "Add", bot_id: "toolbot", client_id: client() })
    const events = await sse.rest()
    const results = events.filter((e) => e.data.type === "tool_result")
    expect(results.map((e) => e.data.result)).toEqual(["5", "15"])
    for (const result of results) {
      expect(typeof result.data.duration_ms).toBe("number")
      expect(result.data).toMatchObject({ tool: "add", name: "add", is_error: false })
    }
    expect(events.filter((e) => e.data.type === "tool_start")[0]!.data).toMatchObject({ tool: "add", name: "add", args: { a: 2, b: 3 } })
    expect(events.at(-1)!.data).toMatchObject({ type: "response", text: "The total is 15", tools_used: ["add", "add"] })
    // The model saw the tool results in order.
    const third = llm.requestsTo("/v1/chat/completions")[2]!.body
    const toolMessages = third.messages.filter((m: { role: string }) => m.role === "tool")
    expect(toolMessages.map((m: { content: string }) => m.content)).toEqual(["5", "15"])
  })

  it("reports a failing tool to the model and carries on", async () => {
    llm.script({ toolCalls: [{ name: "explode", arguments: "{}" }] }, { text: "That tool failed" })
    const sse = await stream({ message: "Try it", bot_id: "toolbot", client_id: client() })
    const events = await sse.rest()
    const result = events.find((e) => e.data.type === "tool_result")!
    expect(result.data.is_error).toBe(true)
    expect(result.data.result).toContain("the tool blew up")
    expect(result.data.error).toContain("the tool blew up")
    expect(events.at(-1)!.data).toMatchObject({ type: "response", text: "That tool failed" })
  })

  it("round-trips a client-side tool", async () => {
    llm.script({ toolCalls: [{ name: "get_location", arguments: "{}" }] }, { text: "You are in Oslo" })
    const sse = await stream({ message: "Where am I?", bot_id: "toolbot", client_id: client() })
    const before = await sse.until((e) => e.data.type === "tool_request")
    const request = before.at(-1)!.data
    expect(request).toMatchObject({ tool: "get_location", name: "get_location", arguments: {} })
    await server.failsWith(NotFound, (client) => client.chat.toolResult({ payload: { request_id: "nope", result: "x" } }))
    await server.call((client) => client.chat.toolResult({ payload: { request_id: request.request_id, result: "Oslo, Norway" } }))
    const after = await sse.rest()
    expect(after.find((e) => e.data.type === "tool_result")!.data.result).toBe("Oslo, Norway")
    expect(after.at(-1)!.data).toMatchObject({ type: "response", text: "You are in Oslo" })
  })

  for (const approved of [true, false]) {
    it(`waits for approval and honours it (${approved ? "granted" : "denied"})`, async () => {
      llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "Done" })
      const sse = await stream({ message: "What time is it?", bot_id: "toolbot", client_id: client() })
      const before = await sse.until((e) => e.data.type === "approval_request")
      const ask = before.at(-1)!.data
      expect(ask).toMatchObject({ tool_name: "current_time", tool: "current_time" })
      expect(ask.approval_id).toBe(ask.request_id)
      // Listed while it waits (approvals:read), then under its decision.
      const pending = await server.call((client) => client.chat.approvals({ urlParams: {} }))
      expect(pending.find((a) => a.approval_id === ask.approval_id)).toMatchObject({
        tool: "current_time",
        status: "pending",
        decided_at: null
      })
      const decide = { path: { id: ask.approval_id }, payload: { approved } }
      await server.call((client) => client.chat.decide(decide))
      const decided = await server.call((client) => client.chat.approvals({ urlParams: { status: approved ? "approved" : "denied" } }))
      expect(decided.map((a) => a.approval_id)).toContain(ask.approval_id)
      expect((await server.call((client) => client.chat.approvals({ urlParams: {} }))).map((a) => a.approval_id)).not.toContain(
        ask.approval_id
      )
      await server.failsWith(ApprovalDecided, (client) => client.chat.decide(decide))
      const after = await sse.rest()
      expect(after[0]!.data).toMatchObject({
        type: "approval_resolved",
        approval_id: ask.approval_id,
        approved,
        tool: "current_time",
        verdict: approved ? "approved" : "denied"
      })
      const result = after.find((e) => e.data.type === "tool_result")!.data.result as string
      if (approved) expect(result).toContain("time_zone")
      else expect(result).toContain("did not approve")
    })
  }

  it("takes a run's tool answer and approval only from a caller that reaches its session", async () => {
    const owner = await createKey(server, ["chat"])
    const stranger = await createKey(server, ["chat"])
    llm.script({ toolCalls: [{ name: "get_location", arguments: "{}" }] }, { toolCalls: [{ name: "current_time", arguments: "{}" }] }, {
      text: "Oslo, at noon"
    })
    const sse = await stream({ message: "Where am I, and what time is it?", bot_id: "toolbot", client_id: client() }, owner.key)
    const request = (await sse.until((e) => e.data.type === "tool_request")).at(-1)!.data
    const answer = { payload: { request_id: request.request_id, result: "Oslo, Norway" } }
    // Another chat key's answer finds no such request, and the run keeps waiting for its own client's.
    await server.as(stranger.key).failsWith(NotFound, (client) => client.chat.toolResult(answer))
    await server.as(owner.key).call((client) => client.chat.toolResult(answer))
    const answered = await sse.until((e) => e.data.type === "approval_request")
    expect(answered.find((e) => e.data.type === "tool_result")!.data).toMatchObject({ name: "get_location", result: "Oslo, Norway" })
    const ask = answered.at(-1)!.data
    const decide = { path: { id: ask.approval_id }, payload: { approved: true } }
    await server.as(stranger.key).failsWith(NotFound, (client) => client.chat.decide(decide))
    const pending = await server.call((client) => client.chat.approvals({ urlParams: {} }))
    expect(pending.find((a) => a.approval_id === ask.approval_id)).toMatchObject({ status: "pending" })
    await server.as(owner.key).call((client) => client.chat.decide(decide))
    const after = await sse.rest()
    expect(after.find((e) => e.data.type === "approval_resolved")!.data).toMatchObject({ approval_id: ask.approval_id, approved: true })
    expect(after.at(-1)!.data).toMatchObject({ type: "response", text: "Oslo, at noon" })
  })

  it("lists a pending approval only to the callers that may decide it", async () => {
    // Two widgets of one bot (two pins), both from a key that reads the approval inbox.
    const key = await createKey(server, ["chat", "approvals:read"])
    await createBot({
      id: "inboxbot",
      name: "Inbox Bot",
      api_key_id: key.id,
      tools: ["current_time"],
      tool_policies: { current_time: "require_approval" }
    })
    const mint = (pin: string) => server.call((client) => client.widget.mint({ payload: { source_bot_id: "inboxbot", pin_id: pin } }))
    const [mine, theirs] = [(await mint("pin-mine")).token, (await mint("pin-theirs")).token]
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "It is noon" })
    const sse = await stream({ message: "What time is it?", bot_id: "inboxbot", client_id: client() }, mine)
    const ask = (await sse.until((e) => e.data.type === "approval_request")).at(-1)!.data
    const listed = async (token: string) =>
      (await server.as(token).call((client) => client.chat.approvals({ urlParams: {} }))).map((a) => a.approval_id)
    expect(await listed(mine)).toContain(ask.approval_id)
    expect(await listed(theirs)).not.toContain(ask.approval_id)
    // The key itself and the static key read the whole inbox.
    expect(await listed(key.key)).toContain(ask.approval_id)
    expect(await listed(server.apiKey)).toContain(ask.approval_id)
    await server.as(theirs).failsWith(
      NotFound,
      (client) => client.chat.decide({ path: { id: ask.approval_id }, payload: { approved: true } })
    )
    await server.as(mine).call((client) => client.chat.decide({ path: { id: ask.approval_id }, payload: { approved: true } }))
    expect((await sse.rest()).at(-1)!.data).toMatchObject({ type: "response", text: "It is noon" })
  })

  it("cancels mid-stream: the stream ends with cancelled and the partial turn is stored", async () => {
    llm.script({ text: "a b c d e f g h i j k l m n o p", chunkDelayMs: 150 })
    const clientId = client()
    const sse = await stream({ message: "Talk slowly", client_id: clientId })
    const first = await sse.until((e) => e.data.type === "assistant_text")
    const sessionId = first.find((e) => e.data.session_id)?.data.session_id
    const cancel = await server.call((client) => client.chat.cancel({ payload: cancelRequest({ client_id: clientId, bot_id: "default" }) }))
    expect(cancel).toEqual({ cancelled: true, queued_tasks_cancelled: 0 })
    const rest = await sse.rest()
    expect(rest.at(-1)!.data.type).toBe("cancelled")
    const session = await server.call((client) => client.sessions.create({ payload: sessionRequest({ client_id: clientId }) }))
    expect(sessionId === undefined || sessionId === session.session_id).toBe(true)
    const messages = await messagesOf(session.session_id)
    const last = messages.at(-1)!
    expect(last.role).toBe("assistant")
    expect(last.metadata.cancelled).toBe(true)
    expect(last.content!.length).toBeGreaterThan(0)
  })

  it("cancels a run whose model has not answered at all yet", async () => {
    llm.script({ hang: true })
    const clientId = client()
    const sse = await stream({ message: "Anyone there?", client_id: clientId })
    await sse.until((e) => e.data.type === "context_budget")
    const cancel = await server.call((client) => client.chat.cancel({ payload: cancelRequest({ client_id: clientId, bot_id: "default" }) }))
    expect(cancel.cancelled).toBe(true)
    // The provider never answers: the run ends with `cancelled` (not a provider timeout's error), so
    // the cancel reached the waiting model call.
    const rest = await sse.rest()
    expect(rest.at(-1)!.data.type).toBe("cancelled")
    expect(rest.some((e) => e.data.type === "error")).toBe(false)
  })

  it("stores a passive message without a run", async () => {
    const sse = await stream({ message: "just so you know", passive: true, client_id: client() })
    const events = await sse.rest()
    expect(types(events)).toEqual(["passive_stored"])
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(0)
    const messages = await messagesOf(events[0]!.data.session_id)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({ role: "user", content: "just so you know", metadata: { passive: true } })
  })

  it("queues a message to a busy session; its stream follows the queued turn to its response, and the blocking call waits for its turn", async () => {
    llm.script({ text: "first answer here", chunkDelayMs: 100 }, { text: "second answer" })
    const clientId = client()
    const first = await stream({ message: "first", client_id: clientId })
    await first.until((e) => e.data.type === "assistant_text")
    const queued = await stream({ message: "second", client_id: clientId })
    const events = await queued.rest()
    expect(types(events)[0]).toBe("queued")
    expect(events[0]!.data).toMatchObject({ reason: "session_busy" })
    expect(typeof events[0]!.data.task_id).toBe("string")
    // The stream stays open through the wait and carries the queued turn itself, `response` last.
    expect(events.at(-1)!.data).toMatchObject({ type: "response", text: "second answer" })
    expect(types(events).filter((type) => type === "response")).toHaveLength(1)
    await first.rest()
    // The queued message runs after the first turn; its answer lands in the session.
    const messages = await waitFor(
      async () => {
        const stored = await messagesOf(events[0]!.data.session_id)
        return stored.some((m) => m.content === "second answer") ? stored : undefined
      },
      "the queued turn's answer stored",
      15_000,
      100
    )
    expect(messages.map((m) => m.content)).toEqual(["first", "first answer here", "second", "second answer"])

    llm.script({ text: "slow one", chunkDelayMs: 80 }, { text: "waited answer" })
    const busy = await stream({ message: "third", client_id: clientId })
    await busy.until((e) => e.data.type === "assistant_text")
    const blocking = await chat({ message: "fourth", client_id: clientId })
    expect(blocking.response).toBe("waited answer")
  })

  it("answers 409 to a busy session when the request asks not to wait (if_busy: reject), keeping nothing", async () => {
    llm.script({ text: "a long first answer", chunkDelayMs: 100 })
    const clientId = client()
    const first = await stream({ message: "first", client_id: clientId })
    await first.until((e) => e.data.type === "assistant_text")
    for (const path of ["/chat", "/chat/stream"]) {
      const refused = await server.request(path, {
        method: "POST",
        body: JSON.stringify({ message: "not now", client_id: clientId, if_busy: "reject" })
      })
      expect(refused.status, path).toBe(409)
      expect((await json(refused)).detail).toContain("locked by a running turn")
    }
    const sessionId = (await first.rest()).at(-1)!.data.session_id
    const stored = await messagesOf(sessionId)
    expect(stored.map((m) => m.content)).not.toContain("not now")
    const tasks = await server.call((client) => client.tasks.list({ urlParams: {} }))
    expect(JSON.stringify(tasks)).not.toContain("not now")
  })

  it("lets a client disconnect, rejoin and replay without gap or duplicate", async () => {
    llm.script({ text: "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12", chunkDelayMs: 60 })
    const sse = await stream({ message: "Go", client_id: client() })
    const seen = await sse.until((e) => e.data.type === "assistant_text" && e.data.text.includes("w3"))
    sse.abort()
    const lastId = seen.at(-1)!.id!
    const sessions = await server.call((client) => client.sessions.legacyList({ urlParams: { client_id: `client-${clientCounter}` } }))
    const session = sessions[0]!.id
    const rejoin = await server.request(`/api/v1/sessions/${session}/stream`, { headers: { "last-event-id": String(lastId) } })
    expect(rejoin.status).toBe(200)
    const rest = await readSse(rejoin).rest()
    const ids = [...seen, ...rest].map((e) => e.id)
    expect(ids).toEqual(ids.map((_, i) => i + 1))
    expect(rest.at(-1)!.data).toMatchObject({ type: "response", text: "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12" })
    const texts = rest.filter((e) => e.data.type === "assistant_text")
    expect(texts.at(-1)!.data.text).toBe("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12")
    // A finished run replays whole from the database, after any point.
    const replay = await readSse(await server.request(`/api/v1/sessions/${session}/stream?after=2`)).rest()
    expect(replay.map((e) => e.id)).toEqual(ids.slice(2))
    expect(replay.at(-1)!.data.type).toBe("response")
  })

  it("switches to a fallback model and says so", async () => {
    llm.script({ status: 500 }, { status: 500 }, { text: "from the fallback" })
    const sse = await stream({ message: "Hi", bot_id: "fallbackbot", client_id: client() })
    const events = await sse.rest()
    expect(events.find((e) => e.data.type === "fallback")!.data).toEqual({
      type: "fallback",
      original_model: "fake-model",
      fallback_model: "fake-model-2"
    })
    expect(events.at(-1)!.data).toMatchObject({ type: "response", text: "from the fallback" })
  })

  it("reports rate_limit_wait when the provider says 429", async () => {
    llm.script({ status: 429, retryAfter: 1 }, { text: "after waiting" })
    const sse = await stream({ message: "Hi", client_id: client() })
    const events = await sse.rest()
    expect(events.find((e) => e.data.type === "rate_limit_wait")!.data.wait_seconds).toBeGreaterThanOrEqual(1)
    expect(events.at(-1)!.data).toMatchObject({ type: "response", text: "after waiting" })
  })

  it("warns about secret-like input by type only", async () => {
    llm.script({ text: "Noted" })
    const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    const sse = await stream({ message: `my key is ${secret}`, client_id: client() })
    const events = await sse.rest()
    const warning = events.find((e) => e.data.type === "secret_warning")!
    expect(warning.data.patterns.length).toBeGreaterThan(0)
    for (const pattern of warning.data.patterns) expect(Object.keys(pattern)).toEqual(["type"])
    expect(JSON.stringify(warning.data)).not.toContain(secret)
  })

  it("ends the stream with an error event, then response, when the model fails", async () => {
    llm.script({ status: 400, errorBody: { error: { message: "bad request from provider" } } })
    const sse = await stream({ message: "Hi", client_id: client() })
    const events = await sse.rest()
    expect(types(events).slice(-2)).toEqual(["error", "response"])
    expect(events.at(-2)!.data.message).toContain("bad request from provider")
  })

  it("answers bad chat input with 422, an unknown bot with 404, and audio that is not what it says with a clear 422", async () => {
    const send = (body: typeof ChatRequest.Encoded) => (client: CairnClient) => client.chat.chat({ payload: chatRequest(body) })
    await server.failsWith(ValidationError, send({ message: "" }))
    // An unknown bot is a 404, as the companion clients expect.
    const badBot = await server.failsWith(NotFound, send({ message: "x", bot_id: "ghost" }))
    expect(badBot.detail).toBe("Unknown bot: ghost")
    const audio = await server.failsWith(ValidationError, send({ audio_data: "AAAA", audio_format: "wav" }))
    expect(audio.detail[0]).toMatchObject({ loc: ["body", "audio_data"], type: "invalid_audio" })
    expect(audio.detail[0]!.msg).toMatch(/not a wav file/)
  })

  it("delegates to another bot and reports delegation_post", async () => {
    llm.script(
      {
        toolCalls: [{ name: "delegate_to_bot", arguments: JSON.stringify({ bot_id: "researcher", message: "Find the capital of Norway" }) }]
      },
      { text: "Oslo is the capital." },
      { text: "The researcher says: Oslo." }
    )
    const sse = await stream({ message: "Ask the researcher", bot_id: "lead", client_id: client() })
    const events = await sse.rest()
    expect(events.find((e) => e.data.type === "delegation_post")!.data).toEqual({
      type: "delegation_post",
      target_bot: "researcher",
      bot_id: "researcher"
    })
    expect(events.find((e) => e.data.type === "tool_result")!.data.result).toBe("Oslo is the capital.")
    expect(events.at(-1)!.data).toMatchObject({ type: "response", text: "The researcher says: Oslo." })
    const [, nested] = llm.requestsTo("/v1/chat/completions")
    expect(nested!.body.model).toBe("fake-model-2")
    expect(nested!.body.messages[0].content).toContain("You research.")
    expect(nested!.body.messages.at(-1)).toMatchObject({ role: "user", content: "Find the capital of Norway" })
  })

  it("picks the model: request override, then channel, then bot, then DEFAULT_MODEL", async () => {
    const channel = await server.call((client) =>
      client.channels.create({ payload: channelRequest({ name: "ops", bot_id: "fallbackbot", model_override: "channel-model" }) })
    )
    const models = async (body: typeof ChatRequest.Encoded) => {
      llm.reset()
      llm.script({ text: "ok" })
      await chat({ message: "m", ...body })
      return llm.requestsTo("/v1/chat/completions")[0]!.body.model
    }
    expect(await models({ channel_id: channel.id, model_override: "request-model" })).toBe("request-model")
    expect(await models({ channel_id: channel.id })).toBe("channel-model")
    expect(await models({ bot_id: "researcher", client_id: client() })).toBe("fake-model-2")
    expect(await models({ client_id: client() })).toBe("fake-model")
  })

  it("keeps dispatch tokens of a session sealed and masked", async () => {
    const clientId = client()
    const dispatch_config = { dispatch_type: "chatplatform", channel_id: "C1", token: "xoxb-very-secret-token" }
    await server.call((client) => client.sessions.create({ payload: sessionRequest({ client_id: clientId, dispatch_config }) }))
    // Raw body: the token must be in no answer, not only in no decoded field.
    const listed = await server.request(`/sessions?client_id=${clientId}`)
    expect(await listed.text()).not.toContain("xoxb-very-secret-token")
    const sessions = await server.call((client) => client.sessions.legacyList({ urlParams: { client_id: clientId } }))
    expect(sessions[0]!.dispatch_config).toMatchObject({ channel_id: "C1", token: "****" })
  })

  it("refuses internal dispatch to a caller without sessions:write", async () => {
    const key = await server.call((client) => client.apiKeys.create({ payload: { name: "chat only", scopes: ["chat"] } }))
    const payload = chatRequest({
      message: "x",
      dispatch_type: "internal",
      dispatch_config: { session_id: "7d2c9d3e-0d7e-4d0c-9a55-0d1c2b3a4f51" }
    })
    const refused = await server.as(key.key).failsWith(Forbidden, (client) => client.chat.chat({ payload }))
    expect(refused.detail).toBe("Missing required scope: sessions:write")
  })

  it("creates a session for an id the server has never seen", async () => {
    llm.script({ text: "fresh" })
    const id = "7d2c9d3e-0d7e-4d0c-9a55-0d1c2b3a4f50"
    expect((await chat({ message: "Hi", session_id: id })).session_id).toBe(id)
    const session = await server.call((client) => client.sessions.legacyGet({ path: { id } }))
    expect(session.messages.map((m) => m.content)).toEqual(["Hi", "fresh"])
    // The typed delete succeeds only on the declared 204.
    await server.call((client) => client.sessions.legacyDelete({ path: { id } }))
    await server.failsWith(NotFound, (client) => client.sessions.legacyGet({ path: { id } }))
  })
})
