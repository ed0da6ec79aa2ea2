/** Scoped API keys over HTTP, on both backends: create, use, scope checks, change, revoke, expiry. */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cacheMs } from "../../src/access/keys/ApiKeys.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { createKey, eventually } from "./helpers.ts"

describe.each(backends)("scoped API keys (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("rejects unknown scopes with a 422 naming each, and creates nothing", async () => {
    const response = await server.request("/api/v1/admin/api-keys", {
      method: "POST",
      body: JSON.stringify({ name: "bad", scopes: ["chat", "root", "settings:read", "nope"] })
    })
    expect(response.status).toBe(422)
    const body = await json(response)
    expect(body.detail.map((issue: { loc: Array<unknown> }) => issue.loc)).toEqual([
      ["body", "scopes", 1],
      ["body", "scopes", 3]
    ])
    expect(body.detail[0].msg).toBe("Unknown scope: root")
    const list = await json(await server.request("/api/v1/admin/api-keys"))
    expect(list.keys.filter((k: { name: string }) => k.name === "bad")).toEqual([])
  })

  it("rejects an expiry in the past and an empty name", async () => {
    const past = await server.request("/api/v1/admin/api-keys", {
      method: "POST",
      body: JSON.stringify({ name: "old", scopes: [], expires_at: "2001-01-01T00:00:00Z" })
    })
    expect(past.status).toBe(422)
    expect((await json(past)).detail[0].loc).toEqual(["body", "expires_at"])
    const empty = await server.request("/api/v1/admin/api-keys", {
      method: "POST",
      body: JSON.stringify({ name: "  ", scopes: [] })
    })
    expect(empty.status).toBe(422)
  })

  it("shows the value once, stores only a hash, and never lists it", async () => {
    const created = await createKey(server, ["settings:read"])
    expect(created.key).toMatch(/^ask_[A-Za-z0-9_-]{43,}$/)
    expect(created.scopes).toEqual(["settings:read"])
    const listed = await server.request("/api/v1/admin/api-keys")
    const text = await listed.text()
    expect(text).not.toContain(created.key)
    const one = await json(await server.request(`/api/v1/admin/api-keys/${created.id}`))
    expect(one).toMatchObject({ id: created.id, status: "active", scopes: ["settings:read"] })
    expect(created.key.startsWith(one.prefix)).toBe(true)
    expect(one.prefix.length).toBeLessThan(16)
    expect(JSON.stringify(one)).not.toContain(created.key)
    if (backend === "postgres") {
      const client = new pg.Client({ connectionString: server.db.databaseUrl })
      await client.connect()
      try {
        const rows = await client.query("SELECT * FROM api_keys WHERE id = $1", [created.id])
        expect(JSON.stringify(rows.rows)).not.toContain(created.key)
        expect(JSON.stringify(rows.rows)).not.toContain(created.key.slice(4))
      } finally {
        await client.end()
      }
    }
  })

  it("grants exactly its scopes: 200 with the scope, 403 naming the missing one", async () => {
    const { key, id } = await createKey(server, ["settings:read"])
    const read = await server.request("/api/v1/admin/settings", { auth: key })
    expect(read.status).toBe(200)
    const write = await server.request("/api/v1/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ SYSTEM_PAUSED: true }),
      auth: key
    })
    expect(write.status).toBe(403)
    expect(await json(write)).toEqual({ detail: "Missing required scope: settings:write" })
    const keysRoute = await server.request("/api/v1/admin/api-keys", { auth: key })
    expect(keysRoute.status).toBe(403)
    expect(await json(keysRoute)).toEqual({ detail: "Missing required scope: admin" })
    // last_used_at is recorded off the request path.
    await eventually(async () => {
      const one = await json(await server.request(`/api/v1/admin/api-keys/${id}`))
      return typeof one.last_used_at === "string"
    }, 3_000)
  })

  it("an admin-scoped key can manage keys; a wrong ask_ value is 401", async () => {
    const admin = await createKey(server, ["admin"])
    const listed = await server.request("/api/v1/admin/api-keys", { auth: admin.key })
    expect(listed.status).toBe(200)
    const wrong = await server.request("/api/v1/admin/settings", { auth: admin.key.slice(0, -2) + "xx" })
    expect(wrong.status).toBe(401)
    expect(await json(wrong)).toEqual({ detail: "Invalid or expired credentials" })
  })

  it("applies changed scopes and a revocation at once on this process", async () => {
    const { key, id } = await createKey(server, ["settings:read"])
    expect((await server.request("/api/v1/admin/settings", { auth: key })).status).toBe(200)
    const renamed = await server.request(`/api/v1/admin/api-keys/${id}`, {
      method: "PATCH",
      body: JSON.stringify({ name: "renamed", scopes: ["bots:read"] })
    })
    expect(renamed.status).toBe(200)
    expect(await json(renamed)).toMatchObject({ name: "renamed", scopes: ["bots:read"] })
    expect((await server.request("/api/v1/admin/settings", { auth: key })).status).toBe(403)
    const revoked = await server.request(`/api/v1/admin/api-keys/${id}`, { method: "DELETE" })
    expect(revoked.status).toBe(200)
    expect((await json(revoked)).status).toBe("revoked")
    const after = await server.request("/api/v1/admin/settings", { auth: key })
    expect(after.status).toBe(401)
    const missing = await server.request("/api/v1/admin/api-keys/00000000-0000-4000-8000-000000000000", {
      method: "DELETE"
    })
    expect(missing.status).toBe(404)
    // An id that is not a UUID is simply not found, like an unknown one.
    const notUuid = await server.request("/api/v1/admin/api-keys/not-a-uuid")
    expect(notUuid.status).toBe(404)
    expect(await json(notUuid)).toEqual({ detail: "API key not found: not-a-uuid" })
  })

  it("refuses a key once its expiry has passed", async () => {
    const expiresAt = new Date(Date.now() + 1_500).toISOString()
    const { key, id } = await createKey(server, ["settings:read"], { expires_at: expiresAt })
    expect((await server.request("/api/v1/admin/settings", { auth: key })).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50))
    expect((await server.request("/api/v1/admin/settings", { auth: key })).status).toBe(401)
    expect((await json(await server.request(`/api/v1/admin/api-keys/${id}`))).status).toBe("expired")
  })
})

// Several server processes share only PostgreSQL (a PGlite directory belongs to one process).
describe("scoped API keys across server processes (postgres)", () => {
  const backend = "postgres" as const
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  it(`a revocation through another server process is enforced within ${cacheMs} ms`, async () => {
    const other = await startServer({ backend, db: server.db })
    try {
      const { key, id } = await createKey(server, ["settings:read"])
      // Both processes have the key cached as valid.
      expect((await other.request("/api/v1/admin/settings", { auth: key })).status).toBe(200)
      expect((await server.request("/api/v1/admin/settings", { auth: key })).status).toBe(200)
      const revokedAt = Date.now()
      expect((await other.request(`/api/v1/admin/api-keys/${id}`, { method: "DELETE" })).status).toBe(200)
      await eventually(
        async () => (await server.request("/api/v1/admin/settings", { auth: key })).status === 401,
        cacheMs + 1_000
      )
      expect(Date.now() - revokedAt).toBeLessThanOrEqual(cacheMs + 500)
    } finally {
      await other.close()
    }
  })
})
