/** Server core over HTTP, on both database backends: health, docs, error shapes, settings. */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cairnVersion } from "../../src/contract/Version.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("server core (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("answers /health without credentials", async () => {
    const response = await server.request("/health", { auth: null })
    expect(response.status).toBe(200)
    expect(await json(response)).toEqual({ status: "ok", version: cairnVersion })
  })

  it("serves an OpenAPI 3 document that validates, admin routes included", async () => {
    const response = await server.request("/openapi.json", { auth: null })
    expect(response.status).toBe(200)
    const spec = await json(response)
    expect(spec.openapi).toMatch(/^3\./)
    const result = await new Validator().validate(spec)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(spec.paths["/api/v1/admin/settings"].get["x-required-scope"]).toBe("settings:read")
    expect(spec.paths["/api/v1/admin/settings"].put["x-required-scope"]).toBe("settings:write")
    // The platform's generic 400 never happens here: decode failures are 422.
    expect(spec.paths["/api/v1/admin/settings"].put.responses["400"]).toBeUndefined()
    expect(spec.paths["/api/v1/admin/settings"].put.responses["422"]).toBeDefined()
  })

  it("serves /docs and /redoc as HTML pages that load the schema", async () => {
    for (const page of ["/docs", "/redoc"]) {
      const response = await server.request(page, { auth: null })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      const html = await response.text()
      // Both explorers inline the spec (no CDN is reachable offline): the page holds the paths.
      expect(html).toContain("/api/v1/admin/settings")
    }
  })

  it("answers an unknown route with 404 and a detail", async () => {
    const response = await server.request("/no/such/route")
    expect(response.status).toBe(404)
    expect(await json(response)).toEqual({ detail: "Not Found" })
  })

  it("answers malformed JSON with a 422 list", async () => {
    const response = await server.request("/api/v1/admin/settings", { method: "PUT", body: "{not json" })
    expect(response.status).toBe(422)
    const body = await json(response)
    expect(body).toEqual({ detail: [{ loc: ["body"], msg: "Request body is not valid JSON", type: "json_invalid" }] })
  })

  it("answers a body of the wrong shape with a 422 list of {loc, msg, type}", async () => {
    const response = await server.request("/api/v1/admin/settings", { method: "PUT", body: "[1,2]" })
    expect(response.status).toBe(422)
    const body = await json(response)
    expect(Array.isArray(body.detail)).toBe(true)
    for (const issue of body.detail) {
      expect(issue.loc[0]).toBe("body")
      expect(typeof issue.msg).toBe("string")
      expect(typeof issue.type).toBe("string")
    }
  })

  it("reports every invalid setting at once and stores none of them", async () => {
    const response = await server.request("/api/v1/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ RATE_LIMIT_DEFAULT: "lots", NOT_A_SETTING: 1, SYSTEM_PAUSED: true })
    })
    expect(response.status).toBe(422)
    const body = await json(response)
    expect(body.detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([
      ["body", "RATE_LIMIT_DEFAULT"],
      ["body", "NOT_A_SETTING"]
    ])
    const list = await json(await server.request("/api/v1/admin/settings"))
    const paused = list.settings.find((s: { key: string }) => s.key === "SYSTEM_PAUSED")
    expect(paused).toMatchObject({ value: false, source: "environment" })
  })

  it("stores a setting, reads it back and resets it", async () => {
    const put = await server.request("/api/v1/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ RATE_LIMIT_CHAT: "12/minute" })
    })
    expect(put.status).toBe(200)
    const list = await json(await server.request("/api/v1/admin/settings"))
    // Each setting says what kind of value it takes and what a reset restores.
    expect(list.settings.find((s: { key: string }) => s.key === "RATE_LIMIT_CHAT")).toMatchObject({
      value: "12/minute",
      source: "stored",
      type: "rate",
      default: "30/minute"
    })
    const byKey = new Map(list.settings.map((s: { key: string; type: string; default: unknown }) => [s.key, s]))
    expect(byKey.get("SYSTEM_PAUSED")).toMatchObject({ type: "boolean", default: false })
    expect(byKey.get("BACKUP_RETENTION")).toMatchObject({ type: "integer", default: expect.any(Number) })
    expect(byKey.get("UPLOAD_ALLOWED_TYPES")).toMatchObject({ type: "list", default: expect.any(Array) })
    const reset = await server.request("/api/v1/admin/settings/RATE_LIMIT_CHAT", { method: "DELETE" })
    expect(reset.status).toBe(200)
    const after = await json(reset)
    expect(after.settings.find((s: { key: string }) => s.key === "RATE_LIMIT_CHAT")).toMatchObject({
      value: "30/minute",
      source: "environment"
    })
    const unknown = await server.request("/api/v1/admin/settings/NOPE", { method: "DELETE" })
    expect(unknown.status).toBe(404)
    expect(await json(unknown)).toEqual({ detail: "Unknown setting: NOPE" })
  })

  it("requires credentials on admin routes and rejects a wrong key", async () => {
    const missing = await server.request("/api/v1/admin/settings", { auth: null })
    expect(missing.status).toBe(401)
    expect(await json(missing)).toEqual({ detail: "Not authenticated" })
    const wrong = await server.request("/api/v1/admin/settings", { auth: "not-the-key" })
    expect(wrong.status).toBe(401)
    // A missing header on a route with a body is still 401, not 422.
    const noAuthBadBody = await server.request("/api/v1/admin/settings", { method: "PUT", body: "{", auth: null })
    expect(noAuthBadBody.status).toBe(401)
  })
})
