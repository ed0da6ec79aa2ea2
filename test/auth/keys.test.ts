/**
 * Scoped API keys over HTTP, on both backends: create, use, scope checks, change, revoke, expiry.
 * Calls go through the typed client; raw requests remain where the test is about the wire (a 422
 * list for input the client refuses to encode, a value that must appear in no response body).
 */
import { Either } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cacheMs } from "../../src/access/keys/ApiKeys.ts"
import { Forbidden, NotFound, Unauthorized, ValidationError } from "../../src/contract/Errors.ts"
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
    // Raw: the typed client checks scope names itself and would not send these.
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
    const list = await server.call((client) => client.apiKeys.list())
    expect(list.keys.filter((k) => k.name === "bad")).toEqual([])
  })

  it("rejects an expiry in the past and an empty name", async () => {
    const past = await server.failsWith(
      ValidationError,
      (client) => client.apiKeys.create({ payload: { name: "old", scopes: [], expires_at: new Date("2001-01-01T00:00:00Z") } })
    )
    expect(past.detail[0]!.loc).toEqual(["body", "expires_at"])
    // Raw: the typed client trims and checks the name itself and would not send a blank one.
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
    // Raw bodies: the value must be in no answer, not only in no decoded field.
    const listed = await server.request("/api/v1/admin/api-keys")
    const text = await listed.text()
    expect(text).not.toContain(created.key)
    expect(await (await server.request(`/api/v1/admin/api-keys/${created.id}`)).text()).not.toContain(created.key)
    const one = await server.call((client) => client.apiKeys.get({ path: { id: created.id } }))
    expect(one).toMatchObject({ id: created.id, status: "active", scopes: ["settings:read"] })
    expect(created.key.startsWith(one.prefix)).toBe(true)
    expect(one.prefix.length).toBeLessThan(16)
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
    const scoped = server.as(key)
    await scoped.call((client) => client.settings.list())
    const write = await scoped.failsWith(Forbidden, (client) => client.settings.update({ payload: { SYSTEM_PAUSED: true } }))
    expect(write.detail).toBe("Missing required scope: settings:write")
    const keysRoute = await scoped.failsWith(Forbidden, (client) => client.apiKeys.list())
    expect(keysRoute.detail).toBe("Missing required scope: admin")
    // last_used_at is recorded off the request path.
    await eventually(async () => {
      const one = await server.call((client) => client.apiKeys.get({ path: { id } }))
      return one.last_used_at instanceof Date
    }, 3_000)
  })

  it("an admin-scoped key can manage keys; a wrong ask_ value is 401", async () => {
    const admin = await createKey(server, ["admin"])
    await server.as(admin.key).call((client) => client.apiKeys.list())
    const wrong = await server.as(admin.key.slice(0, -2) + "xx").failsWith(Unauthorized, (client) => client.settings.list())
    expect(wrong.detail).toBe("Invalid or expired credentials")
  })

  it("applies changed scopes and a revocation at once on this process", async () => {
    const { key, id } = await createKey(server, ["settings:read"])
    const scoped = server.as(key)
    await scoped.call((client) => client.settings.list())
    const renamed = await server.call((client) =>
      client.apiKeys.update({ path: { id }, payload: { name: "renamed", scopes: ["bots:read"] } })
    )
    expect(renamed).toMatchObject({ name: "renamed", scopes: ["bots:read"] })
    await scoped.failsWith(Forbidden, (client) => client.settings.list())
    const revoked = await server.call((client) => client.apiKeys.revoke({ path: { id } }))
    expect(revoked.status).toBe("revoked")
    await scoped.failsWith(Unauthorized, (client) => client.settings.list())
    await server.failsWith(NotFound, (client) => client.apiKeys.revoke({ path: { id: "00000000-0000-4000-8000-000000000000" } }))
    // An id that is not a UUID is simply not found, like an unknown one. Raw: the typed client
    // would not send an id that is not a UUID.
    const notUuid = await server.request("/api/v1/admin/api-keys/not-a-uuid")
    expect(notUuid.status).toBe(404)
    expect(await json(notUuid)).toEqual({ detail: "API key not found: not-a-uuid" })
  })

  it("refuses a key once its expiry has passed", async () => {
    // Long enough that the first call is made before it on a busy machine (1.5 s was not, once).
    const expiresAt = new Date(Date.now() + 4_000)
    const { key, id } = await createKey(server, ["settings:read"], { expires_at: expiresAt })
    await server.as(key).call((client) => client.settings.list())
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 50))
    await server.as(key).failsWith(Unauthorized, (client) => client.settings.list())
    expect((await server.call((client) => client.apiKeys.get({ path: { id } }))).status).toBe("expired")
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

  // Told through the bus, or at the latest once its cache of `cacheMs` lapses: how soon is a
  // timing (bench/replicas.ts measures the bus), not this test's to assert.
  it("a revocation through another server process is enforced there too", async () => {
    const other = await startServer({ backend, db: server.db })
    try {
      const { key, id } = await createKey(server, ["settings:read"])
      // Both processes have the key cached as valid.
      await other.as(key).call((client) => client.settings.list())
      await server.as(key).call((client) => client.settings.list())
      await other.call((client) => client.apiKeys.revoke({ path: { id } }))
      await eventually(async () => {
        const answer = await server.as(key).attempt((client) => client.settings.list())
        return Either.isLeft(answer) && answer.left instanceof Unauthorized
      }, cacheMs + 10_000)
    } finally {
      await other.close()
    }
  })
})
