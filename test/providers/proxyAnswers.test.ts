/**
 * What the completion proxy answers, on the wire, for each kind of request: a completion in the
 * contract's shape, and every refusal in the spec's error shape with its status (and Retry-After
 * where it applies). One code path serves it (the fast route it once had left after
 * measuring, bench/README.md); the request log must not change an answer, so each request also goes to a
 * second server with the request log on and both answers must be equal.
 */
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CompletionResponse } from "../../src/providers/Model.ts"
import { Settings } from "../../src/settings/Settings.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

const PROVIDER_KEY = "sk-fast-route-provider-key-000111"
const path = "/api/v1/llm/completions"
const hello = [{ role: "user", content: "hello" }]

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly headers: Record<string, string | null>
}

const answer = async (response: Response): Promise<Answer> => {
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // kept as text
  }
  return {
    status: response.status,
    body,
    headers: {
      "content-type": response.headers.get("content-type"),
      "retry-after": response.headers.get("retry-after"),
      "access-control-allow-origin": response.headers.get("access-control-allow-origin")
    }
  }
}

describe.each(backends)("completion proxy answers (%s)", (backend) => {
  let llm: FakeLlm
  let quiet: TestServer
  let logged: TestServer
  const loggedLog: Array<string> = []
  const quietLog: Array<string> = []
  // A key without the proxy's scope, on each server (each has its own database).
  let quietScopedKey = ""
  let loggedScopedKey = ""

  beforeAll(async () => {
    llm = await startFakeLlm({ apiKey: PROVIDER_KEY })
    const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: PROVIDER_KEY, DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    quiet = await startServer({ backend, env, onLog: (line) => quietLog.push(line) })
    logged = await startServer({ backend, env: { ...env, LOG_LEVEL: "debug" }, onLog: (line) => loggedLog.push(line) })
    const readerKey = async (server: TestServer) => {
      const created = await server.request("/api/v1/admin/api-keys", {
        method: "POST",
        body: JSON.stringify({ name: "reader", scopes: ["providers:read"] })
      })
      return ((await created.json()) as { key: string }).key
    }
    quietScopedKey = await readerKey(quiet)
    loggedScopedKey = await readerKey(logged)
  })

  afterAll(async () => {
    await quiet?.close()
    await logged?.close()
    await llm?.close()
  })

  /** The same request to both servers, each with the provider scripted alike. */
  const both = async (
    init: { body?: string; auth?: string | null | "scoped"; headers?: Record<string, string>; query?: string },
    script?: () => void
  ): Promise<[Answer, Answer]> => {
    const send = (server: TestServer, key: string) =>
      server.request(`${path}${init.query ?? ""}`, {
        method: "POST",
        ...(init.body !== undefined ? { body: init.body } : {}),
        ...(init.headers ? { headers: init.headers } : {}),
        auth: init.auth === "scoped" ? key : init.auth
      })
    const loggedBefore = loggedLog.filter((line) => line.includes(path)).length
    script?.()
    const a = await answer(await send(quiet, quietScopedKey))
    script?.()
    const b = await answer(await send(logged, loggedScopedKey))
    // The second server logged the request (its request log names the path).
    expect(loggedLog.filter((line) => line.includes(path)).length).toBeGreaterThan(loggedBefore)
    return [a, b]
  }

  /** The spec's error bodies: `{detail}` with a message, and for 422 the list of problems. */
  const detail = { detail: expect.any(String) }
  const problems = { detail: expect.arrayContaining([{ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) }]) }
  const completion = (body: unknown) => expect(() => Schema.decodeUnknownSync(CompletionResponse)(body)).not.toThrow()

  const cases: Array<[string, number, Parameters<typeof both>[0], ((body: unknown) => void) | object, (() => void)?]> = [
    ["a completion", 200, { body: JSON.stringify({ messages: hello, temperature: 0.3, extra: { top_p: 0.5 } }) }, completion],
    ["a completion with a query string", 200, { body: JSON.stringify({ messages: hello }), query: "?trace=1" }, completion],
    ["no credentials", 401, { body: JSON.stringify({ messages: hello }), auth: null }, detail],
    ["a wrong key", 401, { body: JSON.stringify({ messages: hello }), auth: "not-a-key" }, detail],
    ["a key without the scope", 403, { body: JSON.stringify({ messages: hello }), auth: "scoped" }, detail],
    ["a body that is not JSON", 422, { body: "{nope" }, problems],
    ["an empty body", 422, { body: "" }, problems],
    ["a temperature out of range", 422, { body: JSON.stringify({ messages: hello, temperature: 7 }) }, problems],
    ["bad messages and an unknown field", 422, { body: JSON.stringify({ messages: [{ role: "wizard" }], colour: "red" }) }, problems],
    ["a provider rate limit", 429, { body: JSON.stringify({ messages: hello }) }, detail, () => llm.script({ status: 429, retryAfter: 2 })],
    ["a provider failure", 502, { body: JSON.stringify({ messages: hello }) }, detail, () => llm.script({ status: 500 })],
    [
      "an unknown model",
      422,
      { body: JSON.stringify({ messages: hello, model: "nope" }) },
      { detail: [{ loc: ["body", "model"], msg: "The model `nope` does not exist", type: "unknown_model" }] },
      () => llm.script({ status: 404, errorBody: { error: { message: "The model `nope` does not exist" } } })
    ]
  ]

  for (const [name, status, init, shape, script] of cases) {
    it(`answers ${name} with ${status} in the contract's shape, the same with the request log on`, async () => {
      const [answered, withLog] = await both(init, script)
      expect(answered.status).toBe(status)
      if (typeof shape === "function") shape(answered.body)
      else expect(answered.body).toEqual(shape)
      expect(answered.headers["content-type"]).toMatch(/^application\/json/)
      if (status === 429) expect(answered.headers["retry-after"]).toMatch(/^\d+$/)
      expect(answered).toEqual(withLog)
    })
  }

  it("answers the server's own rate limit with 429 and Retry-After, the same with the request log on", async () => {
    const limit = (server: TestServer, values: Record<string, unknown>) =>
      server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
    for (const server of [quiet, logged]) {
      expect((await limit(server, { RATE_LIMIT_ENABLED: true, RATE_LIMIT_DEFAULT: "1/minute" })).status).toBe(200)
    }
    try {
      // One call takes the minute's only token on each server; the next is refused.
      for (const server of [quiet, logged]) await server.request(path, { method: "POST", body: JSON.stringify({ messages: hello }) })
      const [answered, withLog] = await both({ body: JSON.stringify({ messages: hello }) })
      expect(answered.status).toBe(429)
      expect(answered.body).toEqual(detail)
      // Each server's minute began at its own first call, so their waits may differ by the seconds between.
      for (const a of [answered, withLog]) {
        expect(a.headers["retry-after"]).toMatch(/^\d+$/)
        expect(Number(a.headers["retry-after"])).toBeGreaterThan(0)
        expect(Number(a.headers["retry-after"])).toBeLessThanOrEqual(60)
      }
      const withoutWait = (a: Answer) => ({ ...a, headers: { ...a.headers, "retry-after": "a number of seconds" } })
      expect(withoutWait(answered)).toEqual(withoutWait(withLog))
    } finally {
      // The static key is limited too now; the limit is lifted through the database directly.
      for (const server of [quiet, logged]) {
        await server.run(Effect.flatMap(Settings, (settings) => settings.update({ RATE_LIMIT_ENABLED: false })))
      }
    }
  })

  it("never shows the provider key, in an answer or a log line", async () => {
    // Echoed by the provider; with a fallback model the first failure is logged (a warning) with
    // the provider's message, so the log has a line that could carry it.
    const echo = { status: 401, errorBody: { error: { message: `Incorrect API key provided: ${PROVIDER_KEY}` } } }
    llm.script(echo, echo)
    const response = await quiet.request(path, {
      method: "POST",
      body: JSON.stringify({ messages: hello, fallback_models: ["fake-model-2"] })
    })
    expect(response.status).toBe(502)
    expect(await response.json()).toEqual({ detail: "Incorrect API key provided: ****" })
    expect(quietLog.some((line) => line.includes("trying the fallback model") && line.includes("Incorrect API key provided: ****"))).toBe(
      true
    )
    for (const line of [...quietLog, ...loggedLog]) expect(line).not.toContain(PROVIDER_KEY.slice(0, 12))
  })

  it("refuses another content type with 415 and serves a browser origin", async () => {
    const text = await quiet.request(path, {
      method: "POST",
      body: JSON.stringify({ messages: hello }),
      headers: { "content-type": "text/plain" }
    })
    expect(text.status).toBe(415)
    expect(await text.json()).toEqual({ detail: expect.stringContaining("application/json") })
    const browser = await quiet.request(path, {
      method: "POST",
      body: JSON.stringify({ messages: hello }),
      headers: { origin: "http://app.example" }
    })
    expect(browser.status).toBe(200)
    completion(await browser.json())
  })
})
