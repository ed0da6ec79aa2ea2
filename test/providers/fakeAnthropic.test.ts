/** The fake Anthropic server, exercised with the real `@anthropic-ai/sdk` client. */
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeAnthropic, startFakeAnthropic } from "../fixtures/fakeAnthropic.ts"

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
const user = (content: Anthropic.MessageParam["content"]): Anthropic.MessageParam => ({ role: "user", content })
const thinking = { type: "enabled", budget_tokens: 1024 } as const

describe("fake Anthropic fixture", () => {
  let fake: FakeAnthropic
  let client: Anthropic
  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: "sk-ant-fake", textOnlyModels: ["claude-text-only"] })
    client = new Anthropic({ baseURL: fake.url, apiKey: "sk-ant-fake", maxRetries: 0 })
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  it("answers a blocking message from the script, then the default, and records what the SDK sent", async () => {
    fake.script({ text: "Hello there", usage: { input_tokens: 3, output_tokens: 2 } })
    const first = await client.messages.create({ model: "claude-fake", max_tokens: 100, messages: [user("hi")] })
    expect(first).toMatchObject({ type: "message", role: "assistant", model: "claude-fake", stop_reason: "end_turn" })
    expect(first.content).toEqual([{ type: "text", text: "Hello there" }])
    expect(first.usage).toMatchObject({ input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
    const second = await client.messages.create({ model: "claude-fake", max_tokens: 100, messages: [user("one two three")] })
    expect(second.content).toEqual([{ type: "text", text: "ok" }])
    expect(second.usage).toMatchObject({ input_tokens: 3, output_tokens: 1 })
    const [request] = fake.requestsTo("/v1/messages")
    // SDK 1.x sends the key as a bearer token, and its own API version.
    expect(request!.headers.authorization).toBe("Bearer sk-ant-fake")
    expect(request!.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(request!.body).toEqual({ model: "claude-fake", max_tokens: 100, messages: [user("hi")] })
  })

  it("answers thinking, redacted thinking and parallel tool calls in one blocking message", async () => {
    fake.script({
      thinking: "let me think",
      signature: "sig-1",
      redactedThinking: "opaque",
      text: "Checking both.",
      toolCalls: [{ name: "weather", input: { city: "Paris" } }, { id: "toolu_x", name: "time", input: { zone: "CET" } }]
    })
    const message = await client.messages.create({
      model: "claude-fake",
      max_tokens: 2048,
      thinking,
      tools: [{ name: "weather", input_schema: { type: "object" } }, { name: "time", input_schema: { type: "object" } }],
      messages: [user("weather and time in Paris?")]
    })
    expect(message.stop_reason).toBe("tool_use")
    expect(message.content).toEqual([
      { type: "thinking", thinking: "let me think", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Checking both." },
      { type: "tool_use", id: "toolu_fake_1", name: "weather", input: { city: "Paris" } },
      { type: "tool_use", id: "toolu_x", name: "time", input: { zone: "CET" } }
    ])
    expect(message.usage.output_tokens).toBe(2 + 3 + 2)
  })

  it("sends thinking only to a request that enables it", async () => {
    fake.script({ thinking: "hidden", text: "plain" })
    const message = await client.messages.create({ model: "claude-fake", max_tokens: 100, messages: [user("hi")] })
    expect(message.content).toEqual([{ type: "text", text: "plain" }])
  })

  it("streams thinking, text and tool input through messages.stream into the final message", async () => {
    fake.script({
      thinking: "step one step two",
      text: "The answer",
      toolCalls: [{ name: "lookup", input: { query: "weather in Paris" } }, { name: "lookup", input: { query: "time" } }]
    })
    const stream = client.messages.stream({ model: "claude-fake", max_tokens: 4096, thinking, messages: [user("a b c d")] })
    let text = ""
    let thought = ""
    let signature = ""
    stream.on("text", (delta) => void (text += delta))
    stream.on("thinking", (delta) => void (thought += delta))
    stream.on("signature", (s) => void (signature = s))
    const final = await stream.finalMessage()
    expect(text).toBe("The answer")
    expect(thought).toBe("step one step two")
    expect(signature).toMatch(/^sig_/)
    expect(final.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use", "tool_use"])
    expect(final.content.filter((b) => b.type === "tool_use").map((b) => b.input)).toEqual([{ query: "weather in Paris" }, {
      query: "time"
    }])
    expect(final.stop_reason).toBe("tool_use")
    expect(final.usage).toMatchObject({ input_tokens: 4, output_tokens: 4 + 2 + 2 })
  })

  it("streams the raw events in Anthropic's order, the ping hidden by the SDK", async () => {
    fake.script({ text: "a b", toolCalls: [{ name: "f", inputJson: "{\"x\": [1, 2, 3], \"y\": \"zzzzzz\"}" }] })
    const events = await client.messages.create({ model: "claude-fake", max_tokens: 10, messages: [user("hi")], stream: true })
    const seen: Array<string> = []
    let json = ""
    for await (const event of events) {
      seen.push(event.type === "content_block_delta" ? event.delta.type : event.type)
      if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") json += event.delta.partial_json
    }
    expect(seen).toEqual([
      "message_start",
      "content_block_start",
      "text_delta",
      "text_delta",
      "content_block_stop",
      "content_block_start",
      ...Array(4).fill("input_json_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])
    expect(JSON.parse(json)).toEqual({ x: [1, 2, 3], y: "zzzzzz" })
    const raw = fake.requests[0]!
    expect(raw.body.stream).toBe(true)
  })

  it("counts prompt caching by cache_control breakpoints across requests sharing a prefix", async () => {
    const system: Array<Anthropic.TextBlockParam> = [
      { type: "text", text: "You are a careful assistant who answers briefly", cache_control: { type: "ephemeral" } }
    ]
    const first = await client.messages.create({ model: "claude-fake", max_tokens: 10, system, messages: [user("first question")] })
    expect(first.usage).toMatchObject({ input_tokens: 2, cache_creation_input_tokens: 8, cache_read_input_tokens: 0 })
    expect(first.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 8, ephemeral_1h_input_tokens: 0 })
    const second = await client.messages.create({ model: "claude-fake", max_tokens: 10, system, messages: [user("another one here")] })
    expect(second.usage).toMatchObject({ input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 8 })
    // A breakpoint moved to the end of a longer conversation still reads the prefix cached before it.
    const history: Array<Anthropic.MessageParam> = [
      user("another one here"),
      { role: "assistant", content: "ok" },
      user([{ type: "text", text: "and a third", cache_control: { type: "ephemeral" } }])
    ]
    const third = await client.messages.create({ model: "claude-fake", max_tokens: 10, system, messages: history })
    expect(third.usage).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 8, cache_creation_input_tokens: 3 + 1 + 3 })
    const fourth = await client.messages.create({
      model: "claude-fake",
      max_tokens: 10,
      system,
      messages: [...history, { role: "assistant", content: "sure" }, user("last")]
    })
    expect(fourth.usage).toMatchObject({ input_tokens: 2, cache_read_input_tokens: 15, cache_creation_input_tokens: 0 })
    fake.reset()
    const cold = await client.messages.create({ model: "claude-fake", max_tokens: 10, system, messages: [user("first question")] })
    expect(cold.usage).toMatchObject({ cache_creation_input_tokens: 8, cache_read_input_tokens: 0 })
  })

  it("caches nothing under minCacheTokens, and the tools come first in the prefix", async () => {
    const small = await startFakeAnthropic({ minCacheTokens: 10 })
    try {
      const c = new Anthropic({ baseURL: small.url, apiKey: "k", maxRetries: 0 })
      const tools: Array<Anthropic.Tool> = [{
        name: "search",
        description: "Search the web for pages about a topic",
        input_schema: { type: "object" },
        cache_control: { type: "ephemeral" }
      }]
      const short = await c.messages.create({ model: "m", max_tokens: 5, tools, messages: [user("hi")] })
      expect(short.usage).toMatchObject({ input_tokens: 10, cache_creation_input_tokens: 0 })
      const system = [{ type: "text" as const, text: "Be brief please", cache_control: { type: "ephemeral" as const } }]
      const long = await c.messages.create({ model: "m", max_tokens: 5, tools, system, messages: [user("hi")] })
      expect(long.usage).toMatchObject({ input_tokens: 1, cache_creation_input_tokens: 12, cache_read_input_tokens: 0 })
      const again = await c.messages.create({ model: "m", max_tokens: 5, tools, system, messages: [user("hello you")] })
      expect(again.usage).toMatchObject({ input_tokens: 2, cache_read_input_tokens: 12 })
    } finally {
      await small.close()
    }
  })

  it("refuses what the real API refuses, before using the script", async () => {
    fake.script({ text: "kept for the valid request" })
    const refuse = async (params: Record<string, unknown>) => {
      const error = await client.messages.create({ model: "claude-fake", max_tokens: 10, ...params } as any).catch((e) => e)
      expect(error).toBeInstanceOf(Anthropic.BadRequestError)
      expect(error.type).toBe("invalid_request_error")
      return String(error.apiMessage)
    }
    expect(await refuse({ max_tokens: undefined, messages: [user("hi")] })).toBe("max_tokens: Field required")
    expect(await refuse({ messages: [] })).toBe("messages: at least one message is required")
    expect(await refuse({ messages: [{ role: "tool", content: "x" }] })).toMatch(/^messages\.0\.role/)
    expect(await refuse({ messages: [user("")] })).toMatch(/must have non-empty content/)
    const call = { type: "tool_use" as const, id: "toolu_1", name: "f", input: {} }
    const result = { type: "tool_result" as const, tool_use_id: "toolu_1", content: "42" }
    expect(await refuse({ messages: [user("hi"), { role: "assistant", content: "ok" }, user([result])] })).toMatch(
      /^messages\.2\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1/
    )
    expect(await refuse({ messages: [user("hi"), { role: "assistant", content: [call] }, user("and?")] })).toMatch(
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/
    )
    expect(await refuse({ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 500 }, messages: [user("hi")] })).toMatch(
      /budget_tokens: Input should be greater than or equal to 1024/
    )
    expect(await refuse({ max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 2048 }, messages: [user("hi")] })).toMatch(
      /^`max_tokens` must be greater than `thinking.budget_tokens`/
    )
    const image = (media_type: string) => ({ type: "image", source: { type: "base64", media_type, data: png } })
    expect(await refuse({ messages: [user([image("image/jpeg")] as any)] })).toMatch(/does not appear to be a valid image\/jpeg image/)
    expect(await refuse({ model: "claude-text-only", messages: [user([image("image/png")] as any)] })).toMatch(
      /image input is not supported/
    )
    const marked = { type: "text", text: "x", cache_control: { type: "ephemeral" } }
    expect(await refuse({ messages: [user(Array(5).fill(marked))] })).toBe(
      "A maximum of 4 blocks with cache_control may be provided. Found 5."
    )
    const noVersion = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "sk-ant-fake", "content-type": "application/json" },
      body: JSON.stringify({ model: "m", max_tokens: 1, messages: [user("hi")] })
    })
    expect(noVersion.status).toBe(400)
    expect(await noVersion.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: "anthropic-version: header is required" }
    })
    // Consecutive turns of one role are combined, as the API does; a tool round trip pairs up.
    const valid = await client.messages.create({
      model: "claude-fake",
      max_tokens: 10,
      messages: [
        user("hi"),
        user([image("image/png") as any, { type: "text", text: "see" }]),
        { role: "assistant", content: [call] },
        user([result])
      ]
    })
    expect(valid.content).toEqual([{ type: "text", text: "kept for the valid request" }])
  })

  it("insists on the current tool loop's thinking blocks, sent back unaltered", async () => {
    fake.script({ thinking: "plan it", toolCalls: [{ id: "toolu_a", name: "f" }] }, { text: "done" })
    const base = { model: "claude-fake", max_tokens: 2048, thinking, tools: [{ name: "f", input_schema: { type: "object" as const } }] }
    const first = await client.messages.create({ ...base, messages: [user("go")] })
    const result = user([{ type: "tool_result", tool_use_id: "toolu_a", content: "ok" }])
    const turn = (content: Array<any>) => [user("go"), { role: "assistant" as const, content }, result]
    const refuse = async (messages: Array<Anthropic.MessageParam>) => {
      const error = await client.messages.create({ ...base, messages }).catch((e) => e)
      expect(error).toBeInstanceOf(Anthropic.BadRequestError)
      return String(error.apiMessage)
    }
    expect(await refuse(turn(first.content.filter((b) => b.type !== "thinking")))).toMatch(
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/
    )
    const altered = first.content.map((b) => (b.type === "thinking" ? { ...b, thinking: "a different plan" } : b))
    expect(await refuse(turn(altered))).toBe("messages.1.content.0: Invalid `signature` in `thinking` block")
    const next = await client.messages.create({ ...base, messages: turn(first.content) })
    expect(next.content).toEqual([{ type: "text", text: "done" }])
  })

  it("answers errors in Anthropic's shape, surfacing as the SDK's error classes", async () => {
    fake.script({ status: 429, retryAfter: 7 }, { status: 529 }, { status: 400, errorMessage: "bad thing" })
    const params = { model: "claude-fake", max_tokens: 10, messages: [user("hi")] }
    const limited = await client.messages.create(params).catch((e) => e)
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError)
    expect(limited).toMatchObject({ status: 429, type: "rate_limit_error" })
    expect(limited.headers.get("retry-after")).toBe("7")
    expect(limited.requestID).toMatch(/^req_fake_/)
    const overloaded = await client.messages.create(params).catch((e) => e)
    expect(overloaded).toBeInstanceOf(Anthropic.OverloadedError)
    expect(overloaded).toMatchObject({ status: 529, type: "overloaded_error" })
    const bad = await client.messages.create(params).catch((e) => e)
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError)
    expect(bad).toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: "bad thing" })
    const wrong = new Anthropic({ baseURL: fake.url, apiKey: "sk-wrong", maxRetries: 0 })
    const refused = await wrong.messages.create(params).catch((e) => e)
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError)
    expect(refused).toMatchObject({ status: 401, type: "authentication_error" })
    const viaHeader = await fetch(`${fake.url}/v1/models`, { headers: { "x-api-key": "sk-ant-fake", "anthropic-version": "2023-06-01" } })
    expect(viaHeader.status).toBe(200)
  })

  it("surfaces an error event mid-stream, and a dropped stream, as errors", async () => {
    fake.script({ text: "never", streamError: true }, { text: "one two three four five", dropAfterEvents: 4 })
    const params = { model: "claude-fake", max_tokens: 10, messages: [user("hi")] }
    const overloaded = await client.messages.stream(params).finalMessage().catch((e) => e)
    expect(overloaded).toBeInstanceOf(Anthropic.APIError)
    expect(overloaded).toMatchObject({ status: undefined, type: "overloaded_error" })
    let text = ""
    const dropped = client.messages.stream(params).on("text", (t) => void (text += t))
    const error = await dropped.finalMessage().catch((e) => e)
    expect(error).toBeInstanceOf(Anthropic.AnthropicError)
    expect(text).toBe("one ")
  })

  it("cuts a blocking answer and hangs when scripted", async () => {
    fake.script({ dropAfterEvents: 0 }, { hang: true })
    const params = { model: "claude-fake", max_tokens: 10, messages: [user("hi")] }
    expect(await client.messages.create(params).catch((e) => e)).toBeInstanceOf(Anthropic.APIConnectionError)
    const impatient = new Anthropic({ baseURL: fake.url, apiKey: "sk-ant-fake", maxRetries: 0, timeout: 200 })
    expect(await impatient.messages.create(params).catch((e) => e)).toBeInstanceOf(Anthropic.APIConnectionTimeoutError)
  })

  it("echoes the last user message and names the scripted model", async () => {
    fake.script({ text: "you said: ", echo: true, model: "claude-other" })
    const message = await client.messages.create({
      model: "claude-fake",
      max_tokens: 10,
      messages: [user("first"), { role: "assistant", content: "ok" }, user([{ type: "text", text: "second" }])]
    })
    expect(message.content).toEqual([{ type: "text", text: "you said: second" }])
    expect(message.model).toBe("claude-other")
  })

  it("lists models page by page", async () => {
    const paged = await startFakeAnthropic({ models: ["a", "b", "c", "d", "e"] })
    try {
      const c = new Anthropic({ baseURL: paged.url, apiKey: "k", maxRetries: 0 })
      const ids: Array<string> = []
      for await (const model of c.models.list({ limit: 2 })) ids.push(model.id)
      expect(ids).toEqual(["a", "b", "c", "d", "e"])
      expect(paged.requestsTo("/v1/models").map((r) => r.query.after_id ?? null)).toEqual([null, "b", "d"])
      const first = await c.models.list({ limit: 2 })
      expect(first.data[0]).toEqual({ type: "model", id: "a", display_name: "A", created_at: "2025-01-01T00:00:00Z" })
      expect(first.has_more).toBe(true)
      expect(await c.models.retrieve("c")).toMatchObject({ id: "c" })
      expect(await c.models.retrieve("zz").catch((e) => e)).toBeInstanceOf(Anthropic.NotFoundError)
    } finally {
      await paged.close()
    }
  })
})
