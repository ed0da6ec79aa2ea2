/** Rate limits (opt-in, per key / per client address, changed at runtime) and CORS. */
import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { takeToken } from "../../src/access/RateLimit.ts"
import { CairnApi } from "../../src/Api.ts"
import { fromApi } from "../../src/auth/Catalogue.ts"
import { parseRate } from "../../src/config/Rate.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { createKey } from "./helpers.ts"

const rate = (text: string) => Either.getOrThrow(parseRate(text))

describe("token bucket", () => {
  it("allows a burst of the limit, then refills at limit/period", () => {
    const r = rate("3/minute")
    const bucket = { tokens: 3, at: 0 }
    expect([takeToken(bucket, r, 0), takeToken(bucket, r, 0), takeToken(bucket, r, 0)]).toEqual([0, 0, 0])
    expect(takeToken(bucket, r, 0)).toBe(20)
    expect(takeToken(bucket, r, 10_000)).toBe(10)
    expect(takeToken(bucket, r, 20_000)).toBe(0)
    expect(takeToken(bucket, r, 20_000)).toBe(20)
    // Never more than the limit, however long the pause.
    const idle = { tokens: 0, at: 0 }
    takeToken(idle, r, 3_600_000)
    expect(idle.tokens).toBe(2)
  })
})

const api = fromApi(CairnApi)

describe.each(backends)("rate limits (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  const settings = (values: Record<string, unknown>) =>
    server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })

  it("is off by default, applies per key and per address once enabled, and follows runtime changes", async () => {
    const a = await createKey(server, ["settings:read"])
    const b = await createKey(server, ["settings:read"])
    for (let i = 0; i < 8; i++) {
      expect((await server.request("/api/v1/admin/settings", { auth: a.key })).status).toBe(200)
    }

    expect((await settings({ RATE_LIMIT_ENABLED: true, RATE_LIMIT_DEFAULT: "3/minute" })).status).toBe(200)
    for (let i = 0; i < 3; i++) {
      expect((await server.request("/api/v1/admin/settings", { auth: a.key })).status).toBe(200)
    }
    const limited = await server.request("/api/v1/admin/settings", { auth: a.key })
    expect(limited.status).toBe(429)
    expect(await json(limited)).toEqual({ detail: "Too many requests" })
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(20)

    // Another key has its own bucket.
    for (let i = 0; i < 3; i++) {
      expect((await server.request("/api/v1/admin/settings", { auth: b.key })).status).toBe(200)
    }
    expect((await server.request("/api/v1/admin/settings", { auth: b.key })).status).toBe(429)

    // Without credentials the client address is the bucket; failed credentials count there too.
    expect((await server.request("/auth/status", { auth: null })).status).toBe(200)
    expect((await server.request("/auth/status", { auth: null })).status).toBe(200)
    expect((await server.request("/api/v1/admin/settings", { auth: "wrong-key" })).status).toBe(401)
    const anonymous = await server.request("/auth/status", { auth: null })
    expect(anonymous.status).toBe(429)
    expect(anonymous.headers.get("retry-after")).toMatch(/^\d+$/)
    expect((await server.request("/api/v1/admin/settings", { auth: null })).status).toBe(429)

    // A malformed rate is refused and changes nothing; a new rate applies at once.
    const malformed = await settings({ RATE_LIMIT_DEFAULT: "many/minute" })
    expect(malformed.status).toBe(422)
    expect((await server.request("/api/v1/admin/settings", { auth: a.key })).status).toBe(429)
    expect((await settings({ RATE_LIMIT_DEFAULT: "100/minute" })).status).toBe(200)
    expect((await server.request("/api/v1/admin/settings", { auth: a.key })).status).toBe(200)
    expect((await server.request("/auth/status", { auth: null })).status).toBe(200)

    expect((await settings({ RATE_LIMIT_DEFAULT: "1/minute" })).status).toBe(200)
    expect((await server.request("/api/v1/admin/settings", { auth: a.key })).status).toBe(200)
    expect((await server.request("/api/v1/admin/settings", { auth: a.key })).status).toBe(429)
    // Turning it off lifts every limit without a restart.
    expect((await settings({ RATE_LIMIT_ENABLED: false })).status).toBe(200)
    expect((await server.request("/api/v1/admin/settings", { auth: a.key })).status).toBe(200)
    // The health route is not an API route and is never limited.
    expect((await server.request("/health", { auth: null })).status).toBe(200)
  })

  it("applies RATE_LIMIT_CHAT on the chat routes in addition to the default", async () => {
    const key = await createKey(server, ["chat", "settings:read"])
    expect(
      (await settings({ RATE_LIMIT_ENABLED: true, RATE_LIMIT_DEFAULT: "100/minute", RATE_LIMIT_CHAT: "2/minute" })).status
    ).toBe(200)
    const chat = () => server.request("/chat", { method: "POST", body: "{}", auth: key.key })
    for (let i = 0; i < 2; i++) expect((await chat()).status).not.toBe(429)
    const limited = await chat()
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toBe("30")
    // Other routes still follow the default limit only.
    expect((await server.request("/api/v1/admin/settings", { auth: key.key })).status).toBe(200)
    expect((await settings({ RATE_LIMIT_ENABLED: false })).status).toBe(200)
  })

  it("names the chat routes the chat limit applies to, and they exist", () => {
    const chatLimited = api.entries.filter((entry) => entry.chatRateLimited)
    expect(chatLimited.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      "POST /chat",
      "POST /chat/stream",
      "POST /v1/chat/completions",
      "POST /v1/responses"
    ])
    for (const entry of chatLimited) expect(api.lookup("POST", entry.path)?.scope).toBe("chat")
  })
})

describe.each(backends)("CORS (%s)", (backend) => {
  const allowed = "https://app.example.test"
  let server: TestServer
  let plain: TestServer
  beforeAll(async () => {
    server = await startServer({ backend, env: { CORS_ORIGINS: `${allowed}, https://admin.example.test` } })
    plain = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
    await plain?.close()
  })

  const corsHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith("access-control-"))

  it("answers an allowed origin's preflight and marks its responses, errors included", async () => {
    const preflight = await server.request("/api/v1/admin/settings", {
      method: "OPTIONS",
      auth: null,
      headers: {
        origin: allowed,
        "access-control-request-method": "PUT",
        "access-control-request-headers": "authorization, content-type"
      }
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-origin")).toBe(allowed)
    expect(preflight.headers.get("access-control-allow-methods")).toContain("PUT")
    expect(preflight.headers.get("access-control-allow-headers")).toBe("authorization, content-type")

    const ok = await server.request("/api/v1/admin/settings", { headers: { origin: allowed } })
    expect(ok.status).toBe(200)
    expect(ok.headers.get("access-control-allow-origin")).toBe(allowed)
    expect(ok.headers.get("vary")).toContain("Origin")
    const denied = await server.request("/api/v1/admin/settings", { auth: null, headers: { origin: allowed } })
    expect(denied.status).toBe(401)
    expect(denied.headers.get("access-control-allow-origin")).toBe(allowed)
  })

  it("gives other origins no CORS headers at all", async () => {
    const other = "https://evil.example.test"
    const preflight = await server.request("/api/v1/admin/settings", {
      method: "OPTIONS",
      auth: null,
      headers: { origin: other, "access-control-request-method": "PUT" }
    })
    expect(corsHeaders(preflight)).toEqual([])
    const get = await server.request("/api/v1/admin/settings", { headers: { origin: other } })
    expect(get.status).toBe(200)
    expect(corsHeaders(get)).toEqual([])
    const unconfigured = await plain.request("/api/v1/admin/settings", { headers: { origin: allowed } })
    expect(corsHeaders(unconfigured)).toEqual([])
  })
})
