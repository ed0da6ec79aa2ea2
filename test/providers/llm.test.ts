/**
 * The `Llm` service the agent loop and the documents domain use: streaming, fallback, rate-limit
 * waits, embeddings and transcription, against the fake server and a real database.
 */
import { Chunk, ConfigProvider, Effect, Either, Layer, ManagedRuntime, Stream } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { DatabaseLive } from "../../src/main.ts"
import { Llm } from "../../src/providers/Llm.ts"
import type { LlmConfigShape } from "../../src/providers/LlmConfig.ts"
import { type ChatRequest, LlmError, type LlmStreamEvent } from "../../src/providers/Model.ts"
import { retryDelayMs } from "../../src/providers/Retries.ts"
import * as ServerSecret from "../../src/secrets/ServerSecret.ts"
import { Usage } from "../../src/usage/Usage.ts"
import { fakeEmbedding, type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { scaled } from "../support/time.ts"

const context = { source: "agent", principalKind: "user", principalId: "u1", botId: "helper", sessionId: "s1" } as const
const ask = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [{ role: "user", content: "What is the weather?" }],
  usage: context,
  ...extra
})

describe("retryDelayMs", () => {
  const config: Pick<LlmConfigShape, "maxRetries" | "retryBaseMs" | "retryMaxWaitMs"> = {
    maxRetries: 3,
    retryBaseMs: 100,
    retryMaxWaitMs: 5_000
  }
  const upstream = new LlmError({ kind: "upstream", status: 503, detail: "x" })

  it("backs off exponentially with jitter between half and all of the step", () => {
    expect(retryDelayMs(config, 0, upstream, 0)).toBe(50)
    expect(retryDelayMs(config, 0, upstream, 1)).toBe(100)
    expect(retryDelayMs(config, 2, upstream, 0)).toBe(200)
    expect(retryDelayMs(config, 2, upstream, 1)).toBe(400)
  })

  it("honours Retry-After, bounds every wait and the number of retries", () => {
    const limited = (retryAfterSeconds?: number) =>
      new LlmError({ kind: "rate_limited", status: 429, detail: "x", ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) })
    expect(retryDelayMs(config, 0, limited(2))).toBe(2_000)
    expect(retryDelayMs(config, 0, limited(60))).toBeUndefined() // longer than allowed: give up at once
    expect(retryDelayMs({ ...config, retryBaseMs: 10_000 }, 2, limited(), 1)).toBe(5_000)
    expect(retryDelayMs(config, 3, upstream)).toBeUndefined()
  })

  it("retries only what may succeed later", () => {
    expect(retryDelayMs(config, 0, new LlmError({ kind: "invalid_request", status: 400, detail: "x" }))).toBeUndefined()
    expect(retryDelayMs(config, 0, new LlmError({ kind: "upstream", status: 401, detail: "x" }))).toBeUndefined()
    expect(retryDelayMs(config, 0, new LlmError({ kind: "upstream", status: 200, detail: "malformed" }))).toBeUndefined()
    expect(retryDelayMs(config, 0, new LlmError({ kind: "timeout", detail: "x" }), 1)).toBe(100)
  })
})

describe.each(backends)("Llm service (%s)", (backend) => {
  let llm: FakeLlm
  let db: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<Llm | Usage, unknown>
  const run = <A, E>(effect: Effect.Effect<A, E, Llm | Usage>) => runtime.runPromise(effect)
  const collect = (request: ChatRequest) =>
    run(
      Effect.flatMap(Llm, (service) => Stream.runCollect(service.stream(request)).pipe(Effect.map(Chunk.toArray), Effect.either))
    )

  beforeAll(async () => {
    llm = await startFakeLlm({ apiKey: "sk-agent-test-key-123456" })
    db = await createTestDatabase(backend, { migrated: true })
    const env = new Map(
      Object.entries({
        DATA_DIR: db.dataDir,
        ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}),
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-agent-test-key-123456",
        DEFAULT_MODEL: "fake-model",
        EMBEDDING_MODEL: "fake-embedding",
        LLM_MAX_RETRIES: "2",
        LLM_RETRY_BASE_MS: "5",
        // Long enough for a busy machine to answer a call in (at 0.5 s a loaded run timed out its
        // first call and retried into the next script); the one test of the timeout waits it out.
        LLM_TIMEOUT_SECONDS: String(scaled(5_000) / 1000),
        LOG_LEVEL: "error"
      })
    )
    const foundation = Layer.mergeAll(ServerSecret.layer, DatabaseLive).pipe(Layer.provideMerge(AppConfig.layer))
    runtime = ManagedRuntime.make(
      Layer.merge(Llm.Default, Usage.Default).pipe(
        Layer.provide(foundation),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(env)))
      )
    )
    await runtime.runPromise(Effect.void)
  })
  afterAll(async () => {
    await runtime?.dispose()
    await llm?.close()
    await db?.drop()
  })
  beforeEach(() => llm.reset())

  it("streams reasoning, text and tool-call deltas, then exactly one Finished with usage", async () => {
    llm.script({
      reasoning: "Need the weather tool.",
      text: "Let me check.",
      toolCalls: [{ id: "call_w", name: "get_weather", arguments: "{\"city\":\"Paris\",\"unit\":\"celsius\"}" }]
    })
    const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } }]
    const result = await collect(ask({ tools }))
    const events = Either.getOrThrow(result)
    const tags = events.map((e) => e._tag)
    expect(tags.filter((t) => t === "Finished")).toHaveLength(1)
    expect(tags.at(-1)).toBe("Finished")
    expect(events.filter((e) => e._tag === "ReasoningDelta").map((e: any) => e.text).join("")).toBe("Need the weather tool.")
    expect(events.filter((e) => e._tag === "TextDelta").map((e: any) => e.text).join("")).toBe("Let me check.")
    const callDeltas = events.filter((e): e is Extract<LlmStreamEvent, { _tag: "ToolCallDelta" }> => e._tag === "ToolCallDelta")
    expect(callDeltas[0]).toMatchObject({ index: 0, id: "call_w", name: "get_weather", argumentsDelta: "" })
    expect(callDeltas.length).toBeGreaterThan(2)
    expect(events.at(-1)).toEqual({
      _tag: "Finished",
      model: "fake-model",
      text: "Let me check.",
      toolCalls: [{ id: "call_w", name: "get_weather", arguments: "{\"city\":\"Paris\",\"unit\":\"celsius\"}" }],
      usage: { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 },
      finishReason: "tool_calls"
    })
    const [sent] = llm.requestsTo("/v1/chat/completions")
    expect(sent!.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, tools })
  })

  it("finishes with usage null when the provider sends no usage chunk", async () => {
    llm.script({ text: "no usage here", usage: null })
    const events = Either.getOrThrow(await collect(ask()))
    expect(events.at(-1)).toMatchObject({ _tag: "Finished", text: "no usage here", usage: null })
  })

  it("announces a provider 429 wait with RateLimitWait, then streams the answer", async () => {
    llm.script({ status: 429, retryAfter: "0.2" }, { text: "done waiting" })
    const events = Either.getOrThrow(await collect(ask()))
    expect(events[0]).toEqual({ _tag: "RateLimitWait", waitSeconds: 0.2 })
    expect(events.at(-1)).toMatchObject({ _tag: "Finished", text: "done waiting" })
  })

  it("reports a Fallback and streams from the next model when the first fails after its retries", async () => {
    llm.script({ status: 502 }, { status: 502 }, { status: 502 }, { text: "fallback speaking" })
    const events = Either.getOrThrow(await collect(ask({ model: "fake-model", fallbackModels: ["fake-model-2"] })))
    expect(events[0]).toEqual({ _tag: "Fallback", originalModel: "fake-model", fallbackModel: "fake-model-2" })
    expect(events.at(-1)).toMatchObject({ _tag: "Finished", model: "fake-model-2", text: "fallback speaking" })
  })

  it("does not retry a stream that already sent text, and fails with upstream", async () => {
    llm.script({ text: "partial answer", malformed: true }, { text: "must not be used" })
    const result = await collect(ask({ fallbackModels: ["fake-model-2"] }))
    expect(Either.isLeft(result)).toBe(true)
    expect(Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined))).toMatchObject({
      _tag: "LlmError",
      kind: "upstream"
    })
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)
  })

  it("fails with a timeout when the provider stops sending mid-stream", async () => {
    llm.script({ text: "one two three four", hangAfterChunks: 2 })
    // The provider never sends the rest: only the call's own timer ends it, and says so.
    const result = await collect(ask())
    const error = Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined))
    expect(error).toMatchObject({ kind: "timeout" })
  })

  it("completes with the fallback reported to the caller", async () => {
    llm.script({ status: 500 }, { status: 500 }, { status: 500 }, { text: "second model" })
    const result = await run(Effect.flatMap(Llm, (s) => s.complete(ask({ fallbackModels: ["fake-model-2"] }))))
    expect(result).toMatchObject({
      content: "second model",
      model: "fake-model-2",
      fallback: { originalModel: "fake-model", fallbackModel: "fake-model-2" }
    })
  })

  it("embeds texts in order with the fake's deterministic vectors and records the usage", async () => {
    const input = ["the cat sat", "dogs bark loudly", ""]
    const result = await run(Effect.flatMap(Llm, (s) => s.embed({ input, usage: { source: "embedding", botId: "docs" } })))
    expect(result.model).toBe("fake-embedding")
    expect(result.embeddings).toHaveLength(3)
    input.forEach((text, i) => {
      const expected = fakeEmbedding(text, 64)
      result.embeddings[i]!.forEach((x, j) => expect(x).toBeCloseTo(expected[j]!, 6))
    })
    expect(result.usage).toEqual({ prompt_tokens: 6, completion_tokens: 0, total_tokens: 6 })
    const report = await run(Effect.flatMap(Usage, (u) => u.report({})))
    expect(report.by_bot.find((row) => row.bot_id === "docs")).toMatchObject({ calls: 1, prompt_tokens: 6 })
  })

  it("retries an embedding 429 and fails with rate_limited when it persists", async () => {
    llm.scriptEmbeddings({ status: 429, retryAfter: 0 }, { status: 429, retryAfter: 0 }, { status: 429, retryAfter: 0 })
    const result = await run(Effect.flatMap(Llm, (s) => Effect.either(s.embed({ input: ["x"], usage: { source: "embedding" } }))))
    expect(Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined))).toMatchObject({ kind: "rate_limited" })
    expect(llm.requestsTo("/v1/embeddings")).toHaveLength(3)
  })

  it("transcribes audio through the provider", async () => {
    llm.scriptTranscriptions({ text: "hello from audio" })
    // An EBML header, as a WebM file begins: the fake reads the format before it listens.
    const webm = new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, ...new Uint8Array(12)])
    const result = await run(
      Effect.flatMap(Llm, (s) => s.transcribe({ audio: webm, fileName: "voice.webm", mimeType: "audio/webm", usage: context }))
    )
    expect(result).toEqual({ text: "hello from audio", language: null, durationSeconds: null })
    expect(llm.requestsTo("/v1/audio/transcriptions")[0]!.body).toMatchObject({
      fields: { model: "whisper-1" },
      file: { name: "voice.webm", size: 16 }
    })
  })

  it("records usage per model tried, with who asked and the outcome", async () => {
    const report = await run(Effect.flatMap(Usage, (u) => u.report({})))
    const fake = report.by_model.find((row) => row.model === "fake-model")!
    expect(fake.errors).toBeGreaterThanOrEqual(3) // the failed first models of the fallback tests, the broken stream
    expect(report.by_key.find((row) => row.principal_id === "u1")).toMatchObject({ principal_kind: "user" })
  })
})
