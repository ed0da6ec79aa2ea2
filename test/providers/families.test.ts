/**
 * Provider families through the whole server, each against a fixture that speaks its vendor's wire
 * format and driven by the vendor's own SDK inside Cairn: a turn with parallel tool calls, a
 * streamed turn with thinking (and a tool loop that must send Anthropic's signed thinking back), a
 * vision turn, a 429 with its retry wait, a fallback from Claude to an OpenAI model carrying the
 * tool history across, usage rows with cache tokens priced, and each provider's model list.
 */
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeAnthropic, startFakeAnthropic } from "../fixtures/fakeAnthropic.ts"
import { type FakeGemini, startFakeGemini } from "../fixtures/fakeGemini.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { streamedEvents } from "../support/sse.ts"

const ANTHROPIC_KEY = "sk-ant-test-0123456789"
const GEMINI_KEY = "gk-test-0123456789"
const prices = {
  input_price_per_million: 3,
  output_price_per_million: 15,
  cache_read_price_per_million: 0.3,
  cache_write_price_per_million: 3.75
}

describe.each(backends)("provider families (%s)", (backend) => {
  let llm: FakeLlm
  let claude: FakeAnthropic
  let gemini: FakeGemini
  let server: TestServer

  const post = (path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })
  const createBot = async (bot: Record<string, unknown>) => expect((await post("/api/v1/admin/bots", bot)).status).toBe(201)
  const chat = async (body: Record<string, unknown>) => {
    const response = await post("/chat", { client_id: "families", session_id: crypto.randomUUID(), ...body })
    expect(response.status).toBe(200)
    return json(response)
  }
  const messagesTo = (fake: FakeAnthropic) => fake.requestsTo("/v1/messages").map((r) => r.body as any)

  beforeAll(async () => {
    llm = await startFakeLlm()
    claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY, textOnlyModels: ["claude-blind"] })
    gemini = await startFakeGemini({ apiKey: GEMINI_KEY })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        ANTHROPIC_API_KEY: ANTHROPIC_KEY,
        ANTHROPIC_BASE_URL: claude.url,
        GEMINI_API_KEY: GEMINI_KEY,
        GEMINI_BASE_URL: gemini.url,
        LLM_MAX_RETRIES: "1",
        LLM_RETRY_BASE_MS: "10"
      }
    })
    // A stored provider of the Anthropic family, with prices for its model (cache reads and writes too).
    const stored = await post("/api/v1/admin/providers", {
      id: "claude",
      type: "anthropic",
      base_url: claude.url,
      api_key: ANTHROPIC_KEY,
      models: [{ id: "claude-fake", ...prices }]
    })
    expect(stored.status).toBe(201)
    expect(await json(stored)).toMatchObject({ id: "claude", type: "anthropic", source: "stored" })
    await createBot({ id: "claude-tools", name: "Claude tools", model: "claude/claude-fake", tools: ["todos"] })
    await createBot({
      id: "claude-thinks",
      name: "Claude thinks",
      model: "anthropic/claude-fake",
      tools: ["todos"],
      thinking_budget_tokens: 2048
    })
    await createBot({
      id: "claude-falls",
      name: "Claude falls",
      model: "anthropic/claude-fake",
      tools: ["todos"],
      fallback_models: ["fake-model"]
    })
    await createBot({ id: "claude-blind", name: "Claude blind", model: "anthropic/claude-blind" })
    await createBot({
      id: "gemini-tools",
      name: "Gemini tools",
      model: "gemini/gemini-fake",
      tools: ["todos"],
      thinking_budget_tokens: 1024
    })
  })
  afterAll(async () => {
    await server?.close()
    await Promise.all([llm?.close(), claude?.close(), gemini?.close()])
  })
  beforeEach(() => {
    llm.reset()
    claude.reset()
    gemini.reset()
  })

  it("lists the environment's providers by family, read-only, and each provider's own models", async () => {
    const list = await json(await server.request("/api/v1/admin/providers"))
    const byId = Object.fromEntries(list.providers.map((p: any) => [p.id, p]))
    expect(byId.anthropic).toMatchObject({ type: "anthropic", source: "environment", is_default: false })
    expect(byId.gemini).toMatchObject({ type: "gemini", source: "environment" })
    expect(JSON.stringify(list)).not.toContain(ANTHROPIC_KEY)
    expect((await server.request("/api/v1/admin/providers/anthropic", { method: "DELETE" })).status).toBe(409)
    const claudeModels = await json(await server.request("/api/v1/admin/providers/claude/models"))
    expect(claudeModels.upstream_error).toBeNull()
    expect(claudeModels.models.map((m: any) => m.id)).toEqual(expect.arrayContaining(["claude/claude-fake", "claude/claude-fake-2"]))
    const geminiModels = await json(await server.request("/api/v1/admin/providers/gemini/models"))
    expect(geminiModels.models.map((m: any) => m.model)).toEqual(expect.arrayContaining(["gemini-fake", "gemini-fake-pro"]))
  })

  it("lists an older Ollama's models from /api/tags when its /v1/models is missing", async () => {
    const ollama = http.createServer((request, response) => {
      if (request.url === "/api/tags") {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ models: [{ name: "qwen3:8b", size: 1 }, { name: "llama3.2:3b", size: 2 }] }))
      } else {
        response.writeHead(404, { "content-type": "text/plain" })
        response.end("404 page not found")
      }
    })
    await new Promise<void>((resolve) => ollama.listen(0, "127.0.0.1", resolve))
    try {
      const url = `http://127.0.0.1:${(ollama.address() as AddressInfo).port}/v1`
      expect((await post("/api/v1/admin/providers", { id: "old-ollama", base_url: url })).status).toBe(201)
      const listed = await json(await server.request("/api/v1/admin/providers/old-ollama/models"))
      expect(listed.upstream_error).toBeNull()
      expect(listed.models.map((m: any) => m.id)).toEqual(["old-ollama/qwen3:8b", "old-ollama/llama3.2:3b"])
    } finally {
      ollama.close()
    }
  })

  it("runs a turn with parallel tool calls on Claude: tool results go back as tool_result blocks", async () => {
    claude.script(
      {
        text: "Let me note that.",
        toolCalls: [{ name: "todos", input: { action: "create", title: "Buy milk" } }, { name: "todos", input: { action: "list" } }]
      },
      { text: "Noted: buy milk." }
    )
    const answer = await chat({ bot_id: "claude-tools", message: "Remind me to buy milk" })
    expect(answer.response).toBe("Noted: buy milk.")
    const [first, second] = messagesTo(claude)
    expect(first.tools.map((t: any) => t.name)).toEqual(["todos"])
    expect(first.max_tokens).toBe(4096)
    const results = second.messages.at(-1).content.filter((b: any) => b.type === "tool_result")
    const uses = second.messages.at(-2).content.filter((b: any) => b.type === "tool_use")
    expect(uses.map((u: any) => u.input)).toEqual([{ action: "create", title: "Buy milk" }, { action: "list" }])
    expect(results.map((r: any) => r.tool_use_id)).toEqual(uses.map((u: any) => u.id))
    expect(results[0].content).toContain("Buy milk")
  })

  it("streams Claude's thinking as thinking_content, stores it, and sends the signed thinking back within the tool loop", async () => {
    claude.script(
      { thinking: "The user wants a todo.", toolCalls: [{ name: "todos", input: { action: "create", title: "Call mum" } }] },
      { thinking: "It is created.", text: "Done: call mum." }
    )
    const sessionId = crypto.randomUUID()
    const events = await streamedEvents(server, {
      bot_id: "claude-thinks",
      client_id: "families",
      session_id: sessionId,
      message: "Remind me to call mum"
    })
    const thinking = events.filter((e) => e.type === "thinking_content")
    expect(thinking.map((e) => e.delta).join("")).toContain("The user wants a todo.")
    expect(events.at(-1)).toMatchObject({ type: "response", text: "Done: call mum." })
    const [first, second] = messagesTo(claude)
    expect(first.thinking).toEqual({ type: "enabled", budget_tokens: 2048 })
    expect(first.max_tokens).toBe(4096 + 2048)
    expect(first.temperature).toBeUndefined()
    // The fixture refuses a tool loop whose assistant turn does not open with its own signed thinking.
    const loopTurn = second.messages.at(-2)
    expect(loopTurn.role).toBe("assistant")
    expect(loopTurn.content[0]).toMatchObject({ type: "thinking", thinking: "The user wants a todo." })
    expect(loopTurn.content[0].signature).toEqual(expect.any(String))
    // The answer is stored with the run's end, which the stream may report first.
    await expect.poll(async () => {
      const stored = await json(await server.request(`/api/v1/sessions/${sessionId}/messages`))
      return (stored.messages ?? stored).at(-1)?.metadata?.reasoning ?? ""
    }).toContain("It is created.")
  })

  it("sends an image to Claude as a base64 image block, and refuses one to a model that takes none", async () => {
    const data = tinyPng
    claude.script({ text: "A dot." })
    const answer = await chat({
      bot_id: "claude-tools",
      message: "What is this?",
      attachments: [{ type: "image", mime_type: "image/png", name: "dot.png", data }]
    })
    expect(answer.response).toBe("A dot.")
    const blocks = messagesTo(claude)[0].messages.at(-1).content
    expect(blocks).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: "image", source: { type: "base64", media_type: "image/png", data } })
    ]))
    const events = await streamedEvents(server, {
      bot_id: "claude-blind",
      client_id: "families",
      session_id: crypto.randomUUID(),
      message: "And this?",
      attachments: [{ type: "image", mime_type: "image/png", name: "dot.png", data }]
    })
    expect(events.find((e) => e.type === "error")?.message).toContain("image")
  })

  it("waits out a 429's retry-after on Claude (telling the stream) and on Gemini (RetryInfo)", async () => {
    claude.script({ status: 429, retryAfter: 1 }, { text: "After the wait." })
    const events = await streamedEvents(server, {
      bot_id: "claude-tools",
      client_id: "families",
      session_id: crypto.randomUUID(),
      message: "Hi"
    })
    expect(events.find((e) => e.type === "rate_limit_wait")).toMatchObject({ wait_seconds: 1 })
    expect(events.at(-1)).toMatchObject({ type: "response", text: "After the wait." })

    gemini.script({ status: 429, retryDelay: "1s" }, { text: "Gemini after the wait." })
    const geminiEvents = await streamedEvents(server, {
      bot_id: "gemini-tools",
      client_id: "families",
      session_id: crypto.randomUUID(),
      message: "Hi"
    })
    expect(geminiEvents.find((e) => e.type === "rate_limit_wait")).toMatchObject({ wait_seconds: 1 })
    expect(geminiEvents.at(-1)).toMatchObject({ type: "response", text: "Gemini after the wait." })
  })

  it("falls back from Claude to an OpenAI model, carrying the turn's tool history across families", async () => {
    const sessionId = crypto.randomUUID()
    claude.script(
      { toolCalls: [{ name: "todos", input: { action: "create", title: "Water plants" } }] },
      { text: "Created." }
    )
    await chat({ bot_id: "claude-falls", session_id: sessionId, message: "Remind me to water the plants" })
    // Claude is overloaded (and its one retry too): the OpenAI model answers, with the history.
    claude.script({ status: 529 }, { status: 529 })
    llm.script({ text: "From the fallback." })
    const events = await streamedEvents(server, {
      bot_id: "claude-falls",
      client_id: "families",
      session_id: sessionId,
      message: "What did I ask?"
    })
    expect(events.find((e) => e.type === "fallback")).toMatchObject({
      original_model: "anthropic/claude-fake",
      fallback_model: "fake-model"
    })
    expect(events.at(-1)).toMatchObject({ type: "response", text: "From the fallback." })
    const sent = llm.requestsTo("/v1/chat/completions").at(-1)!.body as any
    const call = sent.messages.find((m: any) => m.role === "assistant" && m.tool_calls)
    expect(JSON.parse(call.tool_calls[0].function.arguments)).toEqual({ action: "create", title: "Water plants" })
    expect(sent.messages.find((m: any) => m.role === "tool" && m.tool_call_id === call.tool_calls[0].id)).toBeDefined()
    // Nothing of Anthropic's own (its thinking state) travels to another family.
    expect(JSON.stringify(sent)).not.toContain("providerState")
  })

  it("falls back from Claude on a prompt too long for it and on a refused key, but not on a request it rejects", async () => {
    const ask = () =>
      streamedEvents(server, { bot_id: "claude-falls", client_id: "families", session_id: crypto.randomUUID(), message: "Hi" })
    claude.script({ status: 400, errorMessage: "prompt is too long: 250000 tokens > 200000 maximum" })
    llm.script({ text: "Bigger window." })
    const tooLong = await ask()
    expect(tooLong.find((e) => e.type === "fallback")).toMatchObject({ fallback_model: "fake-model" })
    expect(tooLong.at(-1)).toMatchObject({ type: "response", text: "Bigger window." })

    claude.script({ status: 401, errorMessage: "invalid x-api-key" })
    llm.script({ text: "Another key." })
    expect((await ask()).at(-1)).toMatchObject({ type: "response", text: "Another key." })

    claude.script({ status: 400, errorMessage: "messages.0.content: Input should be a valid list" })
    const rejected = await ask()
    expect(rejected.find((e) => e.type === "fallback")).toBeUndefined()
    expect(rejected.find((e) => e.type === "error")?.message).toContain("valid list")
  })

  it("runs a Gemini turn with tool calls and thought summaries; the calls' thought signatures go back", async () => {
    gemini.script(
      {
        thoughts: "Planning.",
        thoughtSignature: "sig-gemini-1",
        toolCalls: [{ name: "todos", args: { action: "create", title: "Pay rent" } }]
      },
      { text: "Rent noted." }
    )
    const events = await streamedEvents(server, {
      bot_id: "gemini-tools",
      client_id: "families",
      session_id: crypto.randomUUID(),
      message: "Rent!"
    })
    expect(events.filter((e) => e.type === "thinking_content").map((e) => e.delta).join("")).toContain("Planning.")
    expect(events.at(-1)).toMatchObject({ type: "response", text: "Rent noted." })
    const calls = gemini.requests.filter((r) => r.path.includes(":streamGenerateContent")).map((r) => r.body as any)
    expect(calls[0].generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true })
    const modelTurn = calls[1].contents.find((c: any) => c.role === "model")
    expect(modelTurn.parts.find((p: any) => p.functionCall)).toMatchObject({
      thoughtSignature: "sig-gemini-1",
      functionCall: { name: "todos" }
    })
    const response = calls[1].contents.at(-1).parts[0].functionResponse
    expect(response.name).toBe("todos")
    expect(response.response.result).toContain("Pay rent")
  })

  it("records usage with Claude's cache reads and writes, priced at the cache prices", async () => {
    const from = new Date(Date.now() - 1000).toISOString()
    const sessionId = crypto.randomUUID()
    for (const message of ["One", "Two", "Three"]) {
      claude.script({ text: `Answer to ${message}` })
      await chat({ bot_id: "claude-tools", session_id: sessionId, message })
    }
    // The system prompt, tools and the last two user messages are cache breakpoints.
    const marked = messagesTo(claude).at(-1)
    expect(marked.tools.at(-1).cache_control).toEqual({ type: "ephemeral" })
    await expect.poll(async () => {
      const report = await json(await server.request(`/api/v1/admin/usage?from=${encodeURIComponent(from)}`))
      return report.by_model.find((m: any) => m.provider_id === "claude" && m.model === "claude-fake")?.calls ?? 0
    }).toBeGreaterThanOrEqual(3)
    const report = await json(await server.request(`/api/v1/admin/usage?from=${encodeURIComponent(from)}`))
    const row = report.by_model.find((m: any) => m.provider_id === "claude" && m.model === "claude-fake")
    expect(row.cache_write_tokens).toBeGreaterThan(0)
    expect(row.cache_read_tokens).toBeGreaterThan(0)
    const uncached = row.prompt_tokens - row.cache_read_tokens - row.cache_write_tokens
    const expected = (uncached * 3 + row.cache_read_tokens * 0.3 + row.cache_write_tokens * 3.75 + row.completion_tokens * 15) / 1e6
    expect(row.cost_usd).toBeCloseTo(expected, 12)
  })

  it("retries a Claude stream that failed before any output, and reports one that broke off after it (no retry)", async () => {
    claude.script({ streamError: true }, { text: "Second try." })
    const retried = await streamedEvents(server, {
      bot_id: "claude-tools",
      client_id: "families",
      session_id: crypto.randomUUID(),
      message: "Hi"
    })
    expect(retried.at(-1)).toMatchObject({ type: "response", text: "Second try." })
    expect(messagesTo(claude)).toHaveLength(2)

    claude.reset()
    claude.script({ text: "A long answer that breaks off", dropAfterEvents: 6 })
    const broken = await streamedEvents(server, {
      bot_id: "claude-tools",
      client_id: "families",
      session_id: crypto.randomUUID(),
      message: "Hi"
    })
    expect(broken.some((e) => e.type === "assistant_text")).toBe(true)
    expect(broken.find((e) => e.type === "error")?.message).toMatch(/broke off|stopped|connection|terminated/i)
    expect(messagesTo(claude)).toHaveLength(1)
  })

  it("reads a local model's <think> block as thinking, and estimates the usage of a stream that reported none", async () => {
    const from = new Date(Date.now() - 1000).toISOString()
    const chunks = ["<thi", "nk>Let me ", "see.</th", "ink>\n", "The answer."]
    llm.script({ text: chunks.join(""), textChunks: chunks, usage: null })
    const events = await streamedEvents(server, { client_id: "families", session_id: crypto.randomUUID(), message: "Think first" })
    expect(events.filter((e) => e.type === "thinking_content").map((e) => e.delta).join("")).toBe("Let me see.")
    expect(events.filter((e) => e.type === "assistant_text").map((e) => e.delta).join("")).toBe("The answer.")
    expect(events.at(-1)).toMatchObject({ type: "response", text: "The answer." })
    await expect.poll(async () => {
      const report = await json(await server.request(`/api/v1/admin/usage?from=${encodeURIComponent(from)}`))
      return report.by_model.find((m: any) => m.model === "fake-model")
    }).toMatchObject({ estimated_calls: 1, prompt_tokens: expect.any(Number) })
    const report = await json(await server.request(`/api/v1/admin/usage?from=${encodeURIComponent(from)}`))
    const row = report.by_model.find((m: any) => m.model === "fake-model")
    expect(row.prompt_tokens).toBeGreaterThan(0)
    expect(row.completion_tokens).toBeGreaterThan(0)
  })

  it("answers the completion proxy from Claude and Gemini (blocking), in Cairn's shape", async () => {
    claude.script({ text: "Proxy Claude." })
    const viaClaude = await post("/api/v1/llm/completions", { model: "anthropic/claude-fake", messages: [{ role: "user", content: "Hi" }] })
    expect(await json(viaClaude)).toMatchObject({ content: "Proxy Claude.", model: "anthropic/claude-fake" })
    gemini.script({ text: "Proxy Gemini." })
    const viaGemini = await post("/api/v1/llm/completions", {
      model: "gemini/gemini-fake",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }]
    })
    expect(await json(viaGemini)).toMatchObject({ content: "Proxy Gemini.", model: "gemini/gemini-fake" })
    const body = gemini.requests.at(-1)!.body as any
    expect(body.systemInstruction.parts[0].text).toBe("Be brief.")
  })

  it("takes OpenAI's JSON mode to Gemini as its JSON response type, and leaves it out for Claude (which has none)", async () => {
    const json = { response_format: { type: "json_object" } }
    gemini.script({ text: "{\"ok\": true}" })
    expect(
      (await post("/api/v1/llm/completions", { model: "gemini/gemini-fake", messages: [{ role: "user", content: "JSON" }], extra: json }))
        .status
    )
      .toBe(200)
    expect((gemini.requests.at(-1)!.body as any).generationConfig.responseMimeType).toBe("application/json")
    claude.script({ text: "{\"ok\": true}" })
    expect(
      (await post("/api/v1/llm/completions", {
        model: "anthropic/claude-fake",
        messages: [{ role: "user", content: "JSON" }],
        extra: json
      })).status
    )
      .toBe(200)
    expect(messagesTo(claude).at(-1).response_format).toBeUndefined()
  })
})

/** A 1×1 PNG. */
const tinyPng = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
