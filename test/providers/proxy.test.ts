/**
 * The completion proxy over HTTP, against the fake OpenAI-compatible server, on both databases and
 * at two log levels: the default, and LOG_LEVEL=debug with its request log (which must log every
 * call and change no answer).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

const PROVIDER_KEY = "sk-live-0123456789abcdefSECRET"

const chat = (server: TestServer, body: unknown, auth?: string) =>
  server.request("/api/v1/llm/completions", { method: "POST", body: JSON.stringify(body), ...(auth ? { auth } : {}) })

const hello = [{ role: "user", content: "hello there" }]

const ways = [
  ["request log off", "info"],
  ["request log on", "debug"]
] as const

describe.each(backends.flatMap((backend) => ways.map(([way, level]) => [backend, way, level] as const)))(
  "LLM completion proxy (%s, %s)",
  (backend, way, level) => {
    let llm: FakeLlm
    let server: TestServer
    const logs: Array<string> = []

    beforeAll(async () => {
      llm = await startFakeLlm({ apiKey: PROVIDER_KEY })
      server = await startServer({
        backend,
        env: {
          OPENAI_BASE_URL: llm.url,
          OPENAI_API_KEY: PROVIDER_KEY,
          DEFAULT_MODEL: "fake-model",
          LLM_MAX_RETRIES: "2",
          LLM_RETRY_BASE_MS: "5",
          LLM_TIMEOUT_SECONDS: "1",
          LOG_LEVEL: level
        },
        onLog: (line) => logs.push(line)
      })
    })
    afterAll(async () => {
      await server?.close()
      await llm?.close()
    })
    beforeEach(() => llm.reset())

    it("answers {content, model, usage} and sends the request on with the provider's key", async () => {
      llm.script({ text: "Hi! How can I help?", usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 } })
      const response = await chat(server, { messages: hello, temperature: 0.3, max_tokens: 50 })
      expect(response.status).toBe(200)
      expect(await json(response)).toEqual({
        content: "Hi! How can I help?",
        model: "fake-model",
        usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 }
      })
      const [sent] = llm.requestsTo("/v1/chat/completions")
      expect(sent!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`)
      expect(sent!.body).toEqual({ model: "fake-model", messages: hello, temperature: 0.3, max_tokens: 50 })
    })

    it("answers content \"\" when the model returned none, and usage null when the provider reports none", async () => {
      llm.script({ usage: null })
      const response = await chat(server, { model: "fake-model-2", messages: hello })
      expect(response.status).toBe(200)
      expect(await json(response)).toEqual({ content: "", model: "fake-model-2", usage: null })
    })

    it("passes `extra` to the provider untouched", async () => {
      const extra = { top_k: 5, response_format: { type: "json_object" }, metadata: { nested: [1, "two", null] } }
      const response = await chat(server, { messages: hello, extra })
      expect(response.status).toBe(200)
      const [sent] = llm.requestsTo("/v1/chat/completions")
      expect(sent!.body).toMatchObject(extra)
    })

    it("rejects a temperature outside 0..2 and other bad input with a 422 list, calling no provider", async () => {
      for (const temperature of [2.5, -0.1]) {
        const response = await chat(server, { messages: hello, temperature })
        expect(response.status).toBe(422)
        const body = await json(response)
        expect(body.detail).toEqual([expect.objectContaining({ loc: ["body", "temperature"], msg: "Expected a number from 0 to 2" })])
      }
      const empty = await chat(server, { messages: [] })
      expect(empty.status).toBe(422)
      const badRole = await chat(server, { messages: [{ role: "wizard", content: "x" }], max_tokens: 0 })
      expect(badRole.status).toBe(422)
      const locs = (await json(badRole)).detail.map((issue: { loc: Array<unknown> }) => issue.loc.join("."))
      expect(locs).toEqual(expect.arrayContaining(["body.messages.0.role", "body.max_tokens"]))
      expect(llm.requests).toHaveLength(0)
    })

    it("retries a provider 429 honouring Retry-After, then succeeds", async () => {
      llm.script({ status: 429, retryAfter: "0.3" }, { text: "after the wait" })
      const response = await chat(server, { messages: hello })
      expect(response.status).toBe(200)
      expect((await json(response)).content).toBe("after the wait")
      const [limited, retried] = llm.requestsTo("/v1/chat/completions")
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(2)
      // An order, not a speed: the retry reached the provider no sooner than the moment its
      // Retry-After named, 300 ms after the 429 (less the timers' rounding), as the provider stamps
      // the two arrivals: a busy machine only delays the retry.
      expect(retried!.receivedAt).toBeGreaterThanOrEqual(limited!.receivedAt + 290)
    })

    it("answers 429 with Retry-After and the provider's message when the limit persists", async () => {
      const limited = { status: 429, retryAfter: 0, errorBody: { error: { message: "Rate limit reached for fake-model" } } }
      llm.script(limited, limited, limited)
      const response = await chat(server, { messages: hello })
      expect(response.status).toBe(429)
      expect(response.headers.get("retry-after")).toBe("1")
      expect(await json(response)).toEqual({ detail: "Rate limit reached for fake-model" })
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(3) // one call and two retries
    })

    it("answers 502 with the provider's message after retrying a 5xx", async () => {
      const failing = { status: 503, errorBody: { error: { message: "The engine is overloaded" } } }
      llm.script(failing, failing, failing)
      const response = await chat(server, { messages: hello })
      expect(response.status).toBe(502)
      expect(await json(response)).toEqual({ detail: "The engine is overloaded" })
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(3)
    })

    it("answers 502 for a malformed reply without retrying it, and for a provider that hangs", async () => {
      llm.script({ malformed: true })
      const malformed = await chat(server, { messages: hello })
      expect(malformed.status).toBe(502)
      expect((await json(malformed)).detail).toMatch(/Malformed response/)
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)

      llm.reset()
      llm.script({ hang: true }, { hang: true }, { hang: true })
      const hung = await chat(server, { messages: hello })
      expect(hung.status).toBe(502)
      expect((await json(hung)).detail).toMatch(/did not answer in time/)
    }, scaled(20_000))

    it("answers 422 at body.model for a model the provider does not know", async () => {
      llm.script({ status: 404, errorBody: { error: { message: "The model `nope` does not exist", code: "model_not_found" } } })
      const response = await chat(server, { model: "nope", messages: hello })
      expect(response.status).toBe(422)
      expect(await json(response)).toEqual({
        detail: [{ loc: ["body", "model"], msg: "The model `nope` does not exist", type: "unknown_model" }]
      })
    })

    it("uses a fallback model when the first fails after its retries", async () => {
      const failing = { status: 500 }
      llm.script(failing, failing, failing, { text: "from the fallback" })
      const response = await chat(server, { model: "fake-model", fallback_models: ["fake-model-2"], messages: hello })
      expect(response.status).toBe(200)
      expect(await json(response)).toMatchObject({ content: "from the fallback", model: "fake-model-2" })
      expect(llm.requestsTo("/v1/chat/completions").map((r) => r.body.model)).toEqual([
        "fake-model",
        "fake-model",
        "fake-model",
        "fake-model-2"
      ])
    })

    it("never shows the provider key: not in responses, not in any log line", async () => {
      // A provider echoing the key in its error message, as some do.
      const echo = { status: 401, errorBody: { error: { message: `Incorrect API key provided: ${PROVIDER_KEY}` } } }
      llm.script(echo, echo)
      // With a fallback, the first failure is logged with the provider's message.
      const response = await chat(server, { messages: hello, fallback_models: ["fake-model-2"] })
      expect(response.status).toBe(502)
      expect(await json(response.clone())).toEqual({ detail: "Incorrect API key provided: ****" })
      const text = await response.text()
      expect(text).not.toContain(PROVIDER_KEY)
      expect(text).not.toContain(PROVIDER_KEY.slice(0, 12))
      const providers = await server.request("/api/v1/admin/providers")
      const listing = await providers.text()
      expect(listing).not.toContain(PROVIDER_KEY)
      expect(JSON.parse(listing).providers[0]).toMatchObject({ id: "default", api_key: "****CRET", source: "environment" })
      // The failure paths of this suite did log (retries, the fallback), and none of it shows the key.
      // Retries are logged at debug level, which only the router variant runs at.
      if (level === "debug") expect(logs.some((line) => line.includes("Retrying an LLM call"))).toBe(true)
      expect(logs.some((line) => line.includes("trying the fallback model"))).toBe(true)
      expect(logs.some((line) => line.includes("Incorrect API key provided: ****"))).toBe(true)
      for (const line of logs) {
        expect(line).not.toContain(PROVIDER_KEY)
        expect(line).not.toContain(PROVIDER_KEY.slice(0, 12))
      }
    })

    it("requires the llm:completions scope", async () => {
      const created = await server.request("/api/v1/admin/api-keys", {
        method: "POST",
        body: JSON.stringify({ name: "reader", scopes: ["providers:read"] })
      })
      expect(created.status).toBe(201)
      const { key } = await json(created)
      const denied = await chat(server, { messages: hello }, key)
      expect(denied.status).toBe(403)
      expect(await json(denied)).toEqual({ detail: "Missing required scope: llm:completions" })
      const anonymous = await server.request("/api/v1/llm/completions", { method: "POST", body: "{}", auth: null })
      expect(anonymous.status).toBe(401)
    })

    it(`logged each call only with the ${way}`, () => {
      const logged = logs.filter((line) => line.includes("/api/v1/llm/completions")).length
      if (level === "debug") expect(logged).toBeGreaterThan(10)
      else expect(logged).toBe(0)
    })
  }
)
