/** The fake OpenAI-compatible server, exercised with the real `openai` client. */
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { cosine, fakeEmbedding, type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { scaled } from "../support/time.ts"

describe("fake LLM fixture", () => {
  let llm: FakeLlm
  let client: OpenAI
  beforeAll(async () => {
    llm = await startFakeLlm({ apiKey: "sk-fake" })
    client = new OpenAI({ baseURL: llm.url, apiKey: "sk-fake", maxRetries: 0 })
  })
  afterAll(() => llm.close())
  beforeEach(() => llm.reset())

  it("answers a blocking completion from the script, then the default, and records the request", async () => {
    llm.script({ text: "Hello there", usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })
    const first = await client.chat.completions.create({ model: "m1", messages: [{ role: "user", content: "hi" }] })
    expect(first.choices[0]!.message.content).toBe("Hello there")
    expect(first.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 })
    const second = await client.chat.completions.create({ model: "m1", messages: [{ role: "user", content: "one two three" }] })
    expect(second.choices[0]!.message.content).toBe("ok")
    expect(second.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 1 })
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(2)
    expect(llm.requests[0]!.headers.authorization).toBe("Bearer sk-fake")
    expect(llm.requests[0]!.body).toMatchObject({ model: "m1", messages: [{ role: "user", content: "hi" }] })
  })

  it("omits usage when scripted null and rejects a wrong key", async () => {
    llm.script({ text: "x", usage: null })
    const reply = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })
    expect(reply.usage).toBeUndefined()
    const wrong = new OpenAI({ baseURL: llm.url, apiKey: "nope", maxRetries: 0 })
    await expect(wrong.chat.completions.create({ model: "m", messages: [] })).rejects.toMatchObject({ status: 401 })
  })

  it("streams reasoning, text, tool calls and a final usage chunk ending in [DONE]", async () => {
    llm.script({
      reasoning: "think hard",
      text: "The answer",
      toolCalls: [{ name: "lookup", arguments: "{\"query\":\"weather in Paris\"}" }]
    })
    const stream = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "a b c d" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    let text = ""
    let reasoning = ""
    let args = ""
    let name = ""
    let usage: unknown = null
    let finish: string | null = null
    for await (const chunk of stream) {
      const delta: any = chunk.choices[0]?.delta
      if (delta?.content) text += delta.content
      if (delta?.reasoning_content) reasoning += delta.reasoning_content
      for (const call of delta?.tool_calls ?? []) {
        if (call.function?.name) name = call.function.name
        args += call.function?.arguments ?? ""
      }
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason
      if (chunk.usage) usage = chunk.usage
    }
    expect(text).toBe("The answer")
    expect(reasoning).toBe("think hard")
    expect(name).toBe("lookup")
    expect(JSON.parse(args)).toEqual({ query: "weather in Paris" })
    expect(finish).toBe("tool_calls")
    expect(usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 })
  })

  it("sends no usage chunk unless asked", async () => {
    const stream = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.some((c) => c.usage)).toBe(false)
  })

  it("answers scripted errors with their status, body and Retry-After", async () => {
    llm.script({ status: 429, retryAfter: 7, errorBody: { error: { message: "slow down" } } })
    const response = await fetch(`${llm.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-fake", "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [] })
    })
    expect(response.status).toBe(429)
    expect(response.headers.get("retry-after")).toBe("7")
    expect(await response.json()).toEqual({ error: { message: "slow down" } })
  })

  it("sends malformed output and hangs when told to", async () => {
    llm.script({ malformed: true })
    await expect(client.chat.completions.create({ model: "m", messages: [] })).rejects.toThrow()
    llm.script({ hang: true })
    // Nothing comes back: the call ends only by the client's own timeout (long enough for a busy
    // machine to deliver the request in), after the fake took the request.
    await expect(client.chat.completions.create({ model: "m", messages: [] }, { timeout: scaled(2_000) })).rejects.toBeInstanceOf(
      OpenAI.APIConnectionTimeoutError
    )
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(2)
  })

  it("returns deterministic, normalised embeddings whose similarity follows shared words", async () => {
    const reply = await client.embeddings.create({
      model: "fake-embedding",
      input: ["the cat sat", "the cat sat on the mat", "quantum chromodynamics"],
      encoding_format: "float"
    })
    const [a, b, c] = reply.data.map((d) => d.embedding)
    expect(a).toEqual(fakeEmbedding("the cat sat", 64))
    expect(a!.length).toBe(64)
    expect(cosine(a!, a!)).toBeCloseTo(1, 6)
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!))
    expect(reply.usage).toMatchObject({ prompt_tokens: 3 + 6 + 2 })
    // The SDK's default base64 encoding round-trips to the same vector.
    const base64 = await client.embeddings.create({ model: "fake-embedding", input: "the cat sat", dimensions: 16 })
    expect(base64.data[0]!.embedding.length).toBe(16)
    expect(base64.data[0]!.embedding[0]).toBeCloseTo(fakeEmbedding("the cat sat", 16)[0]!, 6)
  })

  it("transcribes multipart audio and lists models", async () => {
    llm.scriptTranscriptions({ text: "hello world" })
    // An Ogg page header: the fake, like a real engine, reads the format before it listens.
    const file = new File([new Uint8Array([0x4f, 0x67, 0x67, 0x53, ...new Uint8Array(28)])], "note.ogg", { type: "audio/ogg" })
    const result = await client.audio.transcriptions.create({ model: "whisper-1", file })
    expect(result.text).toBe("hello world")
    const recorded = llm.requestsTo("/v1/audio/transcriptions")[0]!
    expect(recorded.body).toMatchObject({ fields: { model: "whisper-1" }, file: { name: "note.ogg", size: 32 } })
    const models = await client.models.list()
    expect(models.data.map((m) => m.id)).toContain("fake-model")
  })
})
