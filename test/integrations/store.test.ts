/**
 * The integration store (`cairn.store`) through an integration's own routes, on both backends:
 * LRU sets that keep exactly their capacity, evict the least recently used and survive a restart;
 * check-and-insert that admits one of many concurrent offers (within a process, and across two
 * `cairn serve` processes on PostgreSQL); compare-and-set that refuses a stale write; expiry; and
 * arguments refused before anything is stored.
 */
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, createTestDatabase, tempDir, type TestDatabase } from "../support/database.ts"
import { writeIntegration } from "../support/integrations.ts"
import { type ChildServer, json, spawnDeadlineMs, spawnServer, startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

/**
 * Routes over the store; a refused argument answers 400 with the SDK's message. The server's edge
 * refuses a NUL in a JSON body, so the test sends it as <NUL> and the route makes it the character
 * again: an integration's own data (a mail's text) can carry one, and the store must take it.
 */
const storer = {
  "router.ts": `
const revived = (body) => body === undefined ? body : JSON.parse(JSON.stringify(body).replaceAll("<NUL>", "\\\\u0000"))
const guarded = (f) => async (request, cairn) => {
  try {
    return await f({ ...request, body: revived(request.body) }, cairn)
  } catch (error) {
    return { status: 400, body: { detail: error.name + ": " + error.message }, __response: true }
  }
}
const set = (request, cairn) => cairn.store.lru(request.params.name, Number(request.params.capacity))
export default [
  { method: "POST", path: "/lru/:name/:capacity", description: "offer", handler: guarded(async (r, c) => ({ admitted: await set(r, c).add(r.body.member) })) },
  { method: "GET", path: "/lru/:name/:capacity", description: "members", handler: guarded(async (r, c) => ({ members: await set(r, c).members() })) },
  { method: "POST", path: "/lru/:name/:capacity/has", description: "has", handler: guarded(async (r, c) => ({ has: await set(r, c).has(r.body.member) })) },
  { method: "PUT", path: "/kv/:key", description: "set", handler: guarded(async (r, c) => { await c.store.set(r.params.key, r.body.value, r.body.ttlMs === undefined ? undefined : { ttlMs: r.body.ttlMs }); return {} }) },
  { method: "GET", path: "/kv/:key", description: "get", handler: guarded(async (r, c) => { const value = await c.store.get(r.params.key); return { found: value !== undefined, value: value ?? null } }) },
  { method: "DELETE", path: "/kv/:key", description: "delete", handler: guarded(async (r, c) => ({ deleted: await c.store.delete(r.params.key) })) },
  { method: "POST", path: "/cas/:key", description: "compare and set", handler: guarded(async (r, c) => ({ written: await c.store.compareAndSet(r.params.key, r.body.expected ?? undefined, r.body.next) })) },
  { method: "GET", path: "/keys", description: "keys", handler: guarded(async (r, c) => ({ keys: await c.store.keys(r.query.prefix ?? "") })) },
  { method: "POST", path: "/raw-key", description: "a key the URL cannot carry", handler: guarded(async (r, c) => { await c.store.set(r.body.key, r.body.value); return {} }) }
]
`
}

type Caller = Pick<TestServer, "request">

/** A body with every NUL written <NUL> (see `storer`). */
const sent = (body: unknown) => JSON.stringify(body).replaceAll("\\u0000", "<NUL>")

const post = async (server: Caller, path: string, body: unknown) =>
  json(await server.request(`/integrations/storer${path}`, { method: "POST", body: sent(body) }))
const get = async (server: Caller, path: string) => json(await server.request(`/integrations/storer${path}`))
const put = (server: Caller, path: string, body: unknown) =>
  server.request(`/integrations/storer${path}`, { method: "PUT", body: sent(body) })

describe.each(backends)("the integration store (%s)", (backend) => {
  const dir = tempDir("cairn-store-")
  let db: TestDatabase
  let server: TestServer
  const env = { INTEGRATION_DIRS: dir }

  beforeAll(async () => {
    writeIntegration(dir, "storer", storer)
    db = await createTestDatabase(backend, { migrated: true })
    server = await startServer({ backend, db, env })
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("an LRU set keeps exactly its capacity, evicting the least recently used, and survives a restart", async () => {
    for (const member of ["a", "b", "c"]) expect(await post(server, "/lru/seen/3", { member })).toEqual({ admitted: true })
    expect(await get(server, "/lru/seen/3")).toEqual({ members: ["c", "b", "a"] })
    // Offered again: not admitted, and now the most recently used.
    expect(await post(server, "/lru/seen/3", { member: "a" })).toEqual({ admitted: false })
    expect(await post(server, "/lru/seen/3", { member: "d" })).toEqual({ admitted: true })
    expect(await get(server, "/lru/seen/3")).toEqual({ members: ["d", "a", "c"] })
    expect(await post(server, "/lru/seen/3/has", { member: "b" })).toEqual({ has: false })

    await server.close()
    server = await startServer({ backend, db, env })
    expect(await get(server, "/lru/seen/3")).toEqual({ members: ["d", "a", "c"] })
    expect(await post(server, "/lru/seen/3", { member: "c" })).toEqual({ admitted: false })
    expect(await post(server, "/lru/seen/3", { member: "b" })).toEqual({ admitted: true })
    expect(await get(server, "/lru/seen/3")).toEqual({ members: ["b", "c", "d"] })
  })

  it("admits exactly one of many concurrent offers of one member, and holds the capacity under concurrency", async () => {
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => post(server, "/lru/race/100", { member: `m${round}` })))
      expect(answers.filter((answer) => answer.admitted)).toHaveLength(1)
    }
    await Promise.all(Array.from({ length: 30 }, (_, i) => post(server, "/lru/small/7", { member: `x${i}` })))
    expect((await get(server, "/lru/small/7")).members).toHaveLength(7)
  })

  it("a compare-and-set refuses a stale write", async () => {
    expect(await post(server, "/cas/mailbox:INBOX", { next: 10 })).toEqual({ written: true })
    expect(await post(server, "/cas/mailbox:INBOX", { next: 99 })).toEqual({ written: false })
    expect(await post(server, "/cas/mailbox:INBOX", { expected: 10, next: 11 })).toEqual({ written: true })
    // A writer that still believes 10 is stale: refused, the newer value stays.
    expect(await post(server, "/cas/mailbox:INBOX", { expected: 10, next: 12 })).toEqual({ written: false })
    expect(await get(server, "/kv/mailbox:INBOX")).toEqual({ found: true, value: 11 })
    expect(await get(server, "/keys?prefix=mailbox:")).toEqual({ keys: ["mailbox:INBOX"] })
  })

  it("stores any JSON value, forgets an entry after its TTL, and deletes", async () => {
    const value = { subject: "Re: \u0000 zero\u200b width", list: [1, "two", null], nested: { ok: true } }
    expect((await put(server, "/kv/doc", { value })).status).toBe(200)
    expect(await get(server, "/kv/doc")).toEqual({ found: true, value })

    expect((await put(server, "/kv/short", { value: "soon gone", ttlMs: 300 })).status).toBe(200)
    expect(await get(server, "/kv/short")).toEqual({ found: true, value: "soon gone" })
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await get(server, "/kv/short")).toEqual({ found: false, value: null })
    // An expired entry counts as absent for a compare-and-set too.
    expect(await post(server, "/cas/short", { next: "again" })).toEqual({ written: true })

    expect(await json(await server.request("/integrations/storer/kv/doc", { method: "DELETE" }))).toEqual({ deleted: true })
    expect(await get(server, "/kv/doc")).toEqual({ found: false, value: null })
  })

  it("refuses bad arguments with a TypeError before storing anything", async () => {
    expect(await post(server, "/raw-key", { key: "bad\u0000key", value: 1 })).toEqual({
      detail: expect.stringMatching(/^TypeError: A key must be a string of 1 to 512 characters without NUL/)
    })
    expect(await post(server, "/raw-key", { key: "k".repeat(513), value: 1 })).toEqual({ detail: expect.stringMatching(/^TypeError/) })
    expect(await post(server, "/lru/seen/0", { member: "a" })).toEqual({
      detail: expect.stringMatching(/^TypeError: An LRU set's capacity/)
    })
    expect(await post(server, "/lru/seen/3", { member: "" })).toEqual({ detail: expect.stringMatching(/^TypeError: A member/) })
    expect((await put(server, "/kv/ttl", { value: 1, ttlMs: -5 })).status).toBe(400)
    expect(await get(server, "/kv/ttl")).toEqual({ found: false, value: null })
    expect(await get(server, "/keys")).not.toEqual({ keys: expect.arrayContaining(["bad\u0000key"]) })
  })
})

describe("the integration store across two server processes (postgres)", () => {
  const dir = tempDir("cairn-store-2p-")
  const servers: Array<ChildServer> = []
  let db: TestDatabase

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await db?.drop()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("a check-and-insert offered to both processes at once admits one, and the capacity holds", async () => {
    writeIntegration(dir, "storer", storer)
    db = await createTestDatabase("postgres", { migrated: true })
    servers.push(...(await Promise.all([spawnServer(db, { INTEGRATION_DIRS: dir }), spawnServer(db, { INTEGRATION_DIRS: dir })])))
    const [a, b] = servers as [ChildServer, ChildServer]
    const ids = Array.from({ length: 60 }, (_, i) => `<msg-${i}@example.org>`)
    const answers = await Promise.all(
      ids.flatMap((
        member
      ) => [post(a, "/lru/dedup/1000", { member }), post(b, "/lru/dedup/1000", { member }), post(a, "/lru/dedup/1000", { member })])
    )
    for (let i = 0; i < ids.length; i++) {
      expect(answers.slice(i * 3, i * 3 + 3).filter((answer) => answer.admitted), ids[i]).toHaveLength(1)
    }
    await Promise.all(Array.from({ length: 40 }, (_, i) => post(i % 2 === 0 ? a : b, "/lru/tight/10", { member: `y${i}` })))
    expect((await get(a, "/lru/tight/10")).members).toHaveLength(10)
    expect((await get(b, "/lru/tight/10")).members).toEqual((await get(a, "/lru/tight/10")).members)
    // Two servers started at once on a busy machine, then the offers.
  }, 2 * spawnDeadlineMs + scaled(60_000))
})
