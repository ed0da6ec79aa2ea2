/**
 * The completion proxy's fast route answers exactly as the declared endpoint does through the
 * router: the same server twice, once with the fast route (the default) and once with it standing
 * aside (LOG_LEVEL=debug turns on the request log, which only the router writes), given the same
 * requests against the same fake provider.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fastRouteCounts } from "../../src/http/FastRoutes.ts"
import { Settings } from "../../src/settings/Settings.ts"
import { startFakeLlm, type FakeLlm } from "../fixtures/fakeLlm.ts"
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

describe.each(backends)("completion proxy fast route (%s)", (backend) => {
  let llm: FakeLlm
  let fast: TestServer
  let routed: TestServer
  const routerLog: Array<string> = []
  const fastLog: Array<string> = []
  // A key without the proxy's scope, on each server (each has its own database).
  let fastScopedKey = ""
  let routedScopedKey = ""

  beforeAll(async () => {
    llm = await startFakeLlm({ apiKey: PROVIDER_KEY })
    const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: PROVIDER_KEY, DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    fast = await startServer({ backend, env, onLog: (line) => fastLog.push(line) })
    routed = await startServer({ backend, env: { ...env, LOG_LEVEL: "debug" }, onLog: (line) => routerLog.push(line) })
    const readerKey = async (server: TestServer) => {
      const created = await server.request("/api/v1/admin/api-keys", {
        method: "POST",
        body: JSON.stringify({ name: "reader", scopes: ["providers:read"] })
      })
      return ((await created.json()) as { key: string }).key
    }
    fastScopedKey = await readerKey(fast)
    routedScopedKey = await readerKey(routed)
  })

  afterAll(async () => {
    await fast?.close()
    await routed?.close()
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
    const routedBefore = routerLog.filter((line) => line.includes(path)).length
    const fastBefore = fastRouteCounts.get(path) ?? 0
    script?.()
    const a = await answer(await send(fast, fastScopedKey))
    script?.()
    const b = await answer(await send(routed, routedScopedKey))
    // The second server took the router's way (its request log names the path); the first did not.
    expect(routerLog.filter((line) => line.includes(path)).length).toBeGreaterThan(routedBefore)
    expect(fastRouteCounts.get(path) ?? 0).toBe(fastBefore + 1)
    return [a, b]
  }

  const cases: Array<[string, number, Parameters<typeof both>[0], (() => void)?]> = [
    ["a completion", 200, { body: JSON.stringify({ messages: hello, temperature: 0.3, extra: { top_p: 0.5 } }) }],
    ["a completion with a query string", 200, { body: JSON.stringify({ messages: hello }), query: "?trace=1" }],
    ["no credentials", 401, { body: JSON.stringify({ messages: hello }), auth: null }],
    ["a wrong key", 401, { body: JSON.stringify({ messages: hello }), auth: "not-a-key" }],
    ["a key without the scope", 403, { body: JSON.stringify({ messages: hello }), auth: "scoped" }],
    ["a body that is not JSON", 422, { body: "{nope" }],
    ["an empty body", 422, { body: "" }],
    ["a temperature out of range", 422, { body: JSON.stringify({ messages: hello, temperature: 7 }) }],
    ["bad messages and an unknown field", 422, { body: JSON.stringify({ messages: [{ role: "wizard" }], colour: "red" }) }],
    ["a provider rate limit", 429, { body: JSON.stringify({ messages: hello }) }, () => llm.script({ status: 429, retryAfter: 2 })],
    ["a provider failure", 502, { body: JSON.stringify({ messages: hello }) }, () => llm.script({ status: 500 })],
    [
      "an unknown model",
      422,
      { body: JSON.stringify({ messages: hello, model: "nope" }) },
      () => llm.script({ status: 404, errorBody: { error: { message: "The model `nope` does not exist" } } })
    ]
  ]

  for (const [name, status, init, script] of cases) {
    it(`answers ${name} exactly as the router does`, async () => {
      const [viaFastRoute, viaRouter] = await both(init, script)
      expect(viaFastRoute.status).toBe(status)
      expect(viaFastRoute).toEqual(viaRouter)
    })
  }

  it("answers the server's own rate limit exactly as the router does, Retry-After included", async () => {
    const limit = (server: TestServer, values: Record<string, unknown>) =>
      server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
    for (const server of [fast, routed]) {
      expect((await limit(server, { RATE_LIMIT_ENABLED: true, RATE_LIMIT_DEFAULT: "1/minute" })).status).toBe(200)
    }
    try {
      // One call takes the minute's only token on each server; the next is refused.
      for (const server of [fast, routed]) await server.request(path, { method: "POST", body: JSON.stringify({ messages: hello }) })
      const [viaFastRoute, viaRouter] = await both({ body: JSON.stringify({ messages: hello }) })
      expect(viaFastRoute.status).toBe(429)
      expect(viaFastRoute.headers["retry-after"]).toMatch(/^\d+$/)
      expect(viaFastRoute).toEqual(viaRouter)
    } finally {
      // The static key is limited too now; the limit is lifted through the database directly.
      for (const server of [fast, routed]) {
        await server.run(Effect.flatMap(Settings, (settings) => settings.update({ RATE_LIMIT_ENABLED: false })))
      }
    }
  })

  it("never shows the provider key, in an answer or a log line", async () => {
    // Echoed by the provider; with a fallback model the first failure is logged (a warning) with
    // the provider's message, so the fast route's log has a line that could carry it.
    const echo = { status: 401, errorBody: { error: { message: `Incorrect API key provided: ${PROVIDER_KEY}` } } }
    llm.script(echo, echo)
    const response = await fast.request(path, { method: "POST", body: JSON.stringify({ messages: hello, fallback_models: ["fake-model-2"] }) })
    expect(response.status).toBe(502)
    expect(await response.json()).toEqual({ detail: "Incorrect API key provided: ****" })
    expect(fastLog.some((line) => line.includes("trying the fallback model") && line.includes("Incorrect API key provided: ****"))).toBe(true)
    for (const line of [...fastLog, ...routerLog]) expect(line).not.toContain(PROVIDER_KEY.slice(0, 12))
  })

  it("leaves requests it does not take cheaply to the router: another content type, a browser origin", async () => {
    const before = fastRouteCounts.get(path) ?? 0
    const text = await fast.request(path, { method: "POST", body: JSON.stringify({ messages: hello }), headers: { "content-type": "text/plain" } })
    expect(text.status).toBe(422)
    const browser = await fast.request(path, { method: "POST", body: JSON.stringify({ messages: hello }), headers: { origin: "http://app.example" } })
    expect(browser.status).toBe(200)
    expect(fastRouteCounts.get(path) ?? 0).toBe(before)
  })
})
