/**
 * Exact counters across two server processes on one PostgreSQL (issue 62, item 5): a burst of 50
 * parallel requests sent to both processes in turn gets exactly the limit through, as one process
 * would, for the sign-in lockout, a rate limit and a credential's running runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { type ChildServer, json, spawnServer } from "../support/server.ts"
import { eventually } from "../support/time.ts"
import { count, signIn, streamStatus, trustLocalProxy } from "./bursts.ts"

const owner = { username: "owner", password: "correct horse battery staple" }

describe("exact counters across two processes (postgres)", () => {
  let llm: FakeLlm
  let db: TestDatabase
  let servers: Array<ChildServer> = []
  /** The i-th request of a burst goes to process i mod 2. */
  const at = (i: number) => servers[i % 2]!

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "ok" } })
    db = await createTestDatabase("postgres")
    const env = {
      ...fakeLlmEnv(llm),
      ...trustLocalProxy,
      LLM_MAX_RETRIES: "0",
      LOG_LEVEL: "warning",
      SIGNIN_FIRST_LOCK_SECONDS: "600",
      RUNS_PER_CREDENTIAL_MAX: "5"
    }
    // One first, so the migrations run once; then the other.
    servers = [await spawnServer(db, env)]
    servers.push(await spawnServer(db, env))
    expect((await servers[0]!.request("/auth/setup", { method: "POST", body: JSON.stringify(owner) })).status).toBe(201)
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await db?.drop()
    await llm?.close()
  })

  const newKey = async () => {
    const response = await servers[0]!.request("/api/v1/admin/api-keys", {
      method: "POST",
      body: JSON.stringify({ name: "burst", scopes: ["chat"] })
    })
    expect(response.status).toBe(201)
    return (await json(response)).key as string
  }

  it("answers exactly 5 of 50 wrong passwords from one source 401 across both processes, and lets the owner in from elsewhere", async () => {
    const burst = await Promise.all(
      Array.from({ length: 50 }, (_, i) => signIn(at(i).request, "203.0.113.77", owner.username, `guess ${i}`))
    )
    const statuses = burst.map((response) => response.status)
    expect(count(statuses, 401)).toBe(5)
    expect(count(statuses, 429)).toBe(45)
    for (const refused of burst.filter((response) => response.status === 429)) {
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    }
    // Both processes see the lock; neither holds the owner signing in from another address.
    for (const server of servers) {
      expect((await signIn(server.request, "203.0.113.77", owner.username, owner.password)).status).toBe(429)
      expect((await signIn(server.request, "192.0.2.20", owner.username, owner.password)).status).toBe(200)
    }
  })

  it("runs exactly RUNS_PER_CREDENTIAL_MAX of a credential's 50 messages across both processes", async () => {
    llm.setDefaultReply({ hang: true })
    const key = await newKey()
    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => streamStatus(at(i).request, key)))
    expect(count(burst.map((r) => r.status), 200)).toBe(5)
    expect(count(burst.map((r) => r.status), 429)).toBe(45)
    for (const r of burst.filter((r) => r.status === 200)) {
      await servers[0]!.request("/chat/cancel", { method: "POST", body: JSON.stringify({ client_id: "-", session_id: r.session }) })
    }
    llm.setDefaultReply({ text: "ok" })
  })

  it("lets exactly the chat rate limit's 5 of 50 messages through across both processes", async () => {
    const saved = await servers[0]!.request("/api/v1/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ RATE_LIMIT_ENABLED: true, RATE_LIMIT_CHAT: "5/hour", RUNS_PER_CREDENTIAL_MAX: 100 })
    })
    expect(saved.status).toBe(200)
    const key = await newKey()
    // The other process drops its settings cache on the change's notice: wait until it holds the
    // new limit (a probe key's sixth message is refused there), so the burst meets it on both.
    const probe = await newKey()
    for (let i = 0; i < 5; i++) await streamStatus(servers[0]!.request, probe)
    await eventually(async () => (await streamStatus(servers[1]!.request, probe)).status === 429, "the rate limit on the other process")

    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => streamStatus(at(i).request, key)))
    expect(count(burst.map((r) => r.status), 200)).toBe(5)
    const refused = burst.filter((r) => r.status === 429)
    expect(refused).toHaveLength(45)
    for (const r of refused) expect(r.detail).toBe("Too many requests")
  })
})
