/** `GET /health/ready`: every check named, ready on a fresh server; liveness beside it. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("readiness (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("is ready, naming each check, without credentials", async () => {
    const response = await server.request("/health/ready", { auth: null })
    expect(response.status).toBe(200)
    const body = await json(response)
    expect(body.status).toBe("ready")
    expect(Object.keys(body.checks).sort()).toEqual(["database", "draining", "memory", "migrations", "writable"])
    for (const check of Object.values(body.checks) as Array<{ ok: boolean; detail: string }>) {
      expect(check.ok).toBe(true)
      expect(check.detail.length).toBeGreaterThan(0)
    }
    expect(body.checks.migrations.detail).toMatch(/^applied up to \d+$/)
  })

  it("answers through the typed client", async () => {
    const ready = await server.call((client) => client.health.ready())
    expect(ready.status).toBe("ready")
    expect(ready.checks.writable.ok).toBe(true)
    expect((await server.call((client) => client.health.health())).status).toBe("ok")
  })
})
