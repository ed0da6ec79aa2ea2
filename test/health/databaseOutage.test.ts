/**
 * PostgreSQL out of reach: the server's pool reaches it through a relay the test cuts. A request
 * that needs the database then gets 503 with Retry-After (a while, not a bug: never a bare 500),
 * readiness says the database is down, and the server serves again once the database is back,
 * with no restart. PGlite lives in the process and has no outage of this kind.
 */
import { afterAll, describe, expect, it } from "vitest"
import { startDelayRelay } from "../cluster/Latency.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

describe("the database out of reach (postgres)", () => {
  let db: TestDatabase
  let server: TestServer | undefined
  const relays: Array<{ close: () => Promise<void> }> = []
  afterAll(async () => {
    await server?.close()
    for (const relay of relays) await relay.close()
    await db?.drop()
  })

  it("answers 503 with Retry-After while PostgreSQL cannot be reached, and serves again when it can", async () => {
    db = await createTestDatabase("postgres", { migrated: true })
    const direct = new URL(db.databaseUrl!)
    const target = { host: direct.hostname, port: Number(direct.port || 5432) }
    const relay = await startDelayRelay("127.0.0.1", target)
    relays.push(relay)
    const viaRelay = new URL(db.databaseUrl!)
    viaRelay.hostname = "127.0.0.1"
    viaRelay.port = String(relay.port)
    server = await startServer({ backend: "postgres", db, env: { DATABASE_URL: viaRelay.toString() } })
    const list = () => server!.request("/api/v1/admin/dead-letters")
    expect((await list()).status).toBe(200)

    await relay.close()
    const statuses: Array<number> = []
    const refused = await waitFor(async () => {
      const response = await list()
      statuses.push(response.status)
      return response.status === 503 ? response : undefined
    }, "a request refused with 503 while the database is away")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await json(refused)).detail).toMatch(/database/i)
    // No request answered as if the server were broken while the database was away.
    expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([])
    const ready = await server.request("/health/ready", { auth: null })
    expect(ready.status).toBe(503)
    expect((await json(ready)).checks.database.ok).toBe(false)

    // The database answers again on the same address: the pool reconnects, nothing restarted.
    relays.push(await startDelayRelay("127.0.0.1", target, relay.port))
    await waitFor(async () => ((await list()).status === 200 ? true : undefined), "the server serving again")
    await waitFor(async () => ((await server!.request("/health/ready", { auth: null })).status === 200 ? true : undefined), "ready again")
  })
})
