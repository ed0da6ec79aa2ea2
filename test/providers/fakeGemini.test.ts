/** The fake Gemini server, exercised with the real `@google/genai` client. */
import { ApiError, type Content, GoogleGenAI } from "@google/genai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeGemini, startFakeGemini } from "../fixtures/fakeGemini.ts"
import { fakeEmbedding } from "../fixtures/fakeLlm.ts"

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
const user = (text: string): Content => ({ role: "user", parts: [{ text }] })

/** The JSON body an ApiError carries as its message. */
const body = (error: unknown): any => JSON.parse((error as ApiError).message)

describe("fake Gemini fixture", () => {
  let fake: FakeGemini
  let ai: GoogleGenAI
  beforeAll(async () => {
    fake = await startFakeGemini({ apiKey: "gk-fake" })
    ai = new GoogleGenAI({ apiKey: "gk-fake", apiVersion: "v1beta", httpOptions: { baseUrl: fake.url } })
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  it("answers generateContent from the script, then the default, and records what the SDK sent", async () => {
    fake.script({ text: "Hello there" })
    const first = await ai.models.generateContent({
      model: "gemini-fake",
      contents: "hi there",
      config: { systemInstruction: "be nice", temperature: 0.2, maxOutputTokens: 50 }
    })
    expect(first.text).toBe("Hello there")
    expect(first.candidates![0]).toMatchObject({ content: { role: "model", parts: [{ text: "Hello there" }] }, finishReason: "STOP" })
    expect(first.usageMetadata).toMatchObject({ promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 })
    expect(first.modelVersion).toBe("gemini-fake")
    expect(first.responseId).toBe("fake-response-1")
    const second = await ai.models.generateContent({ model: "gemini-fake", contents: "again" })
    expect(second.text).toBe("ok")
    const [request] = fake.requestsTo("/v1beta/models/gemini-fake:generateContent")
    expect(request!.headers["x-goog-api-key"]).toBe("gk-fake")
    expect(request!.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "hi there" }] }],
      systemInstruction: { role: "user", parts: [{ text: "be nice" }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 50 }
    })
    // The fake answers /v1 too (the SDK's default from 3.x on).
    const v1 = new GoogleGenAI({ apiKey: "gk-fake", apiVersion: "v1", httpOptions: { baseUrl: fake.url } })
    expect((await v1.models.generateContent({ model: "gemini-fake", contents: "x" })).text).toBe("ok")
    expect(fake.requestsTo("/v1/models/gemini-fake:generateContent")).toHaveLength(1)
  })

  it("answers thought summaries, parallel function calls and a thought signature", async () => {
    const script = {
      thoughts: "thinking it over",
      text: "Calling both.",
      thoughtSignature: "c2lnbmF0dXJl",
      toolCalls: [{ name: "weather", args: { city: "Paris" } }, { id: "call-2", name: "time", args: { zone: "CET" } }]
    }
    fake.script(script, script)
    const config = {
      thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 },
      tools: [{ functionDeclarations: [{ name: "weather" }, { name: "time" }] }]
    }
    const response = await ai.models.generateContent({ model: "gemini-fake", contents: "weather?", config })
    expect(response.candidates![0]!.content!.parts).toEqual([
      { text: "thinking it over", thought: true },
      { text: "Calling both." },
      { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "c2lnbmF0dXJl" },
      { functionCall: { id: "call-2", name: "time", args: { zone: "CET" } } }
    ])
    expect(response.functionCalls).toEqual([{ name: "weather", args: { city: "Paris" } }, {
      id: "call-2",
      name: "time",
      args: { zone: "CET" }
    }])
    expect(response.usageMetadata).toMatchObject({ candidatesTokenCount: 2 + 2, thoughtsTokenCount: 3, totalTokenCount: 3 + 4 + 3 })
    // Without includeThoughts the summary stays hidden; the thinking is still counted.
    const quiet = await ai.models.generateContent({ model: "gemini-fake", contents: "weather?", config: { tools: config.tools } })
    expect(quiet.candidates![0]!.content!.parts!.some((p) => p.thought)).toBe(false)
    expect(quiet.usageMetadata!.thoughtsTokenCount).toBe(3)
  })

  it("streams thoughts, text and function calls as SSE chunks, the last with finishReason and usage", async () => {
    fake.script({ thoughts: "hmm", text: "The answer is", toolCalls: [{ name: "f", args: { a: 1 } }] })
    const stream = await ai.models.generateContentStream({
      model: "gemini-fake",
      contents: "a b c",
      config: { thinkingConfig: { includeThoughts: true } }
    })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.map((c) => c.candidates![0]!.content!.parts)).toEqual([
      [{ text: "hmm", thought: true }],
      [{ text: "The " }],
      [{ text: "answer " }],
      [{ text: "is" }],
      [{ functionCall: { name: "f", args: { a: 1 } } }]
    ])
    expect(chunks.slice(0, -1).every((c) => c.candidates![0]!.finishReason === undefined)).toBe(true)
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe("STOP")
    expect(chunks[0]!.usageMetadata).toEqual({ promptTokenCount: 3, totalTokenCount: 3 })
    expect(chunks.at(-1)!.usageMetadata).toMatchObject({
      promptTokenCount: 3,
      candidatesTokenCount: 4,
      thoughtsTokenCount: 1,
      totalTokenCount: 8
    })
    expect(fake.requests[0]!.path).toBe("/v1beta/models/gemini-fake:streamGenerateContent")
    expect(fake.requests[0]!.query).toEqual({ alt: "sse" })
  })

  it("answers errors in Google's shape, surfacing as the SDK's ApiError with the status", async () => {
    fake.script({ status: 429, retryDelay: "3s" }, { status: 503 }, { status: 400, errorMessage: "bad thing" }, { status: 404 })
    const failure = () => ai.models.generateContent({ model: "gemini-fake", contents: "hi" }).catch((e) => e)
    const limited = await failure()
    expect(limited).toBeInstanceOf(ApiError)
    expect(limited.status).toBe(429)
    expect(body(limited).error).toMatchObject({
      code: 429,
      status: "RESOURCE_EXHAUSTED",
      details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" }]
    })
    const unavailable = await failure()
    expect(unavailable.status).toBe(503)
    expect(body(unavailable).error.status).toBe("UNAVAILABLE")
    expect(body(await failure()).error).toEqual({ code: 400, status: "INVALID_ARGUMENT", message: "bad thing" })
    expect(body(await failure()).error.status).toBe("NOT_FOUND")
  })

  it("refuses a wrong key with Google's 400 API_KEY_INVALID, and a missing one with a 403", async () => {
    const wrong = new GoogleGenAI({ apiKey: "nope", apiVersion: "v1beta", httpOptions: { baseUrl: fake.url } })
    const refused = await wrong.models.generateContent({ model: "gemini-fake", contents: "hi" }).catch((e) => e)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused.status).toBe(400)
    expect(body(refused).error.details[0]).toMatchObject({ reason: "API_KEY_INVALID" })
    const missing = await fetch(`${fake.url}/v1beta/models`)
    expect(missing.status).toBe(403)
    expect(((await missing.json()) as any).error.status).toBe("PERMISSION_DENIED")
    expect((await fetch(`${fake.url}/v1beta/models?key=gk-fake`)).status).toBe(200)
  })

  it("surfaces an error chunk mid-stream, and a dropped stream, as errors", async () => {
    fake.script({ text: "one two three", streamError: true }, { text: "one two three four", dropAfterEvents: 2 })
    const read = async () => {
      const texts: Array<string> = []
      try {
        for await (const chunk of await ai.models.generateContentStream({ model: "gemini-fake", contents: "hi" })) texts.push(chunk.text!)
      } catch (error) {
        return { texts, error }
      }
      return { texts, error: undefined }
    }
    const overloaded = await read()
    expect(overloaded.texts).toEqual(["one "])
    expect(overloaded.error).toBeInstanceOf(ApiError)
    expect((overloaded.error as ApiError).status).toBe(503)
    const dropped = await read()
    expect(dropped.texts).toEqual(["one ", "two "])
    expect(dropped.error).toBeInstanceOf(Error)
    fake.script({ dropAfterEvents: 0 })
    await expect(ai.models.generateContent({ model: "gemini-fake", contents: "hi" })).rejects.toThrow()
  })

  it("answers a blocked prompt without candidates, usage null without usageMetadata, and echoes", async () => {
    fake.script({ blockReason: "SAFETY" }, { text: "x", usage: null, finishReason: "MAX_TOKENS" }, { text: "you said: ", echo: true })
    const blocked = await ai.models.generateContent({ model: "gemini-fake", contents: "something bad" })
    expect(blocked.promptFeedback).toEqual({ blockReason: "SAFETY" })
    expect(blocked.candidates).toBeUndefined()
    expect(blocked.text).toBeUndefined()
    const bare = await ai.models.generateContent({ model: "gemini-fake", contents: "hi" })
    expect(bare.usageMetadata).toBeUndefined()
    expect(bare.candidates![0]!.finishReason).toBe("MAX_TOKENS")
    const echoed = await ai.models.generateContent({
      model: "gemini-fake",
      contents: [user("first"), { role: "model", parts: [{ text: "ok" }] }, user("second")]
    })
    expect(echoed.text).toBe("you said: second")
  })

  it("refuses what the real API refuses, before using the script", async () => {
    fake.script({ text: "kept for the valid request" })
    const refuse = async (contents: Array<Content>) => {
      const error = await ai.models.generateContent({ model: "gemini-fake", contents }).catch((e) => e)
      expect(error).toBeInstanceOf(ApiError)
      expect(error.status).toBe(400)
      return body(error).error.message as string
    }
    const call = { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] }
    const answer = (name: string) => ({ role: "user", parts: [{ functionResponse: { name, response: { result: 42 } } }] })
    expect(await refuse([user("hi"), answer("f")])).toBe(
      "Please ensure that function response turn comes immediately after a function call turn."
    )
    expect(await refuse([user("hi"), call, { role: "user", parts: [...answer("f").parts, ...answer("f").parts] }])).toMatch(
      /number of function response parts is equal to the number of function call parts/
    )
    expect(await refuse([user("hi"), call, answer("g")])).toMatch(/function response g/)
    expect(await refuse([call, answer("f")])).toMatch(/function call turn comes immediately after a user turn/)
    expect(await refuse([{ role: "system", parts: [{ text: "x" }] }])).toBe("Please use a valid role: user, model.")
    expect(await refuse([{ role: "user", parts: [] }])).toMatch(/contents\[0\]\.parts: contents\.parts must not be empty/)
    const empty = await fetch(`${fake.url}/v1beta/models/gemini-fake:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": "gk-fake", "content-type": "application/json" },
      body: JSON.stringify({ contents: [] })
    })
    expect(((await empty.json()) as any).error.message).toBe("* GenerateContentRequest.contents: contents is not specified\n")
    const valid = await ai.models.generateContent({
      model: "gemini-fake",
      contents: [{ role: "user", parts: [{ text: "look" }, { inlineData: { mimeType: "image/png", data: png } }] }, call, answer("f")]
    })
    expect(valid.text).toBe("kept for the valid request")
    expect(valid.usageMetadata!.promptTokensDetails).toEqual([{ modality: "TEXT", tokenCount: 3 }, { modality: "IMAGE", tokenCount: 258 }])
  })

  it("insists on the thought signature of the current turn's function calls", async () => {
    fake.script({ thoughtSignature: "sig-A", toolCalls: [{ name: "f", args: { q: 1 } }] })
    const config = { tools: [{ functionDeclarations: [{ name: "f" }] }] }
    const first = await ai.models.generateContent({ model: "gemini-fake", contents: "go", config })
    const signedTurn = first.candidates![0]!.content!
    expect(signedTurn.parts![0]!.thoughtSignature).toBe("sig-A")
    const stripped = { role: "model", parts: [{ functionCall: { name: "f", args: { q: 1 } } }] }
    const answer = { role: "user", parts: [{ functionResponse: { name: "f", response: { ok: true } } }] }
    const refused = await ai.models.generateContent({ model: "gemini-fake", contents: [user("go"), stripped, answer], config }).catch((e) =>
      e
    )
    expect(refused.status).toBe(400)
    expect(body(refused).error.message).toMatch(/^Function call is missing a thought_signature in functionCall parts/)
    expect((await ai.models.generateContent({ model: "gemini-fake", contents: [user("go"), signedTurn, answer], config })).text).toBe("ok")
    // Only the current turn is checked: a later user message closes it.
    const later = [user("go"), stripped, answer, { role: "model", parts: [{ text: "done" }] }, user("next")]
    expect((await ai.models.generateContent({ model: "gemini-fake", contents: later, config })).text).toBe("ok")
  })

  it("embeds deterministically, honouring outputDimensionality, and fails when scripted", async () => {
    const result = await ai.models.embedContent({
      model: "text-embedding-fake",
      contents: ["red apple", "green pear"],
      config: { outputDimensionality: 8 }
    })
    expect(result.embeddings!.map((e) => e.values)).toEqual([fakeEmbedding("red apple", 8), fakeEmbedding("green pear", 8)])
    expect(fake.requests[0]!.path).toBe("/v1beta/models/text-embedding-fake:batchEmbedContents")
    const plain = await ai.models.embedContent({ model: "text-embedding-fake", contents: "x" })
    expect(plain.embeddings![0]!.values).toHaveLength(64)
    fake.scriptEmbeddings({ status: 429, retryDelay: "10s" })
    const limited = await ai.models.embedContent({ model: "text-embedding-fake", contents: "x" }).catch((e) => e)
    expect(limited.status).toBe(429)
    expect(body(limited).error.details[0].retryDelay).toBe("10s")
  })

  it("lists models page by page and gives up on a hanging answer at the client's timeout", async () => {
    const listed = []
    for await (const model of await ai.models.list({ config: { pageSize: 2 } })) listed.push(model)
    expect(listed.map((m) => m.name)).toEqual(["models/gemini-fake", "models/gemini-fake-pro", "models/text-embedding-fake"])
    expect(listed[0]!.supportedActions).toContain("generateContent")
    expect(listed[2]!.supportedActions).toEqual(["embedContent", "batchEmbedContents"])
    expect(fake.requestsTo("/v1beta/models")).toHaveLength(2)
    fake.script({ hang: true })
    const impatient = new GoogleGenAI({ apiKey: "gk-fake", apiVersion: "v1beta", httpOptions: { baseUrl: fake.url, timeout: 200 } })
    await expect(impatient.models.generateContent({ model: "gemini-fake", contents: "hi" })).rejects.toThrow()
  })
})
