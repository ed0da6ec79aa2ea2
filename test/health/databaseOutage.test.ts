/**
 * PostgreSQL out of reach: the server's pool reaches it through a relay the test cuts. A request
 * that needs the database then gets 503 with Retry-After (a while, not a bug: never a bare 500),
 * readiness says the database is down, and the server serves again once the database is back,
 * with no restart. A task whose run ended while the database was away is finished once it is back,
 * once. PGlite lives in the process and has no outage of this kind.
 */
import { afterAll, describe, expect, it } from "vitest"
import { startDelayRelay } from "../cluster/Latency.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { scaled, sleep, waitFor } from "../support/time.ts"

describe("the database out of reach (postgres)", () => {
  let db: TestDatabase
  let server: TestServer | undefined
  let llm: FakeLlm | undefined
  const relays: Array<{ close: () => Promise<void> }> = []
  afterAll(async () => {
    await server?.close()
    for (const relay of relays) await relay.close()
    await db?.drop()
    await llm?.close()
  })

  /** A server whose pool reaches a fresh database through a relay the test can cut and open again. */
  const throughRelay = async (env: Record<string, string> = {}) => {
    db = await createTestDatabase("postgres", { migrated: true })
    const direct = new URL(db.databaseUrl!)
    const target = { host: direct.hostname, port: Number(direct.port || 5432) }
    const relay = await startDelayRelay("127.0.0.1", target)
    relays.push(relay)
    const viaRelay = new URL(db.databaseUrl!)
    viaRelay.hostname = "127.0.0.1"
    viaRelay.port = String(relay.port)
    server = await startServer({ backend: "postgres", db, env: { ...env, DATABASE_URL: viaRelay.toString() } })
    return {
      cut: () => relay.close(),
      restore: async () => void relays.push(await startDelayRelay("127.0.0.1", target, relay.port))
    }
  }

  it("answers 503 with Retry-After while PostgreSQL cannot be reached, and serves again when it can", async () => {
    const relay = await throughRelay()
    const list = () => server!.request("/api/v1/admin/dead-letters")
    expect((await list()).status).toBe(200)

    await relay.cut()
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
    const ready = await server!.request("/health/ready", { auth: null })
    expect(ready.status).toBe(503)
    expect((await json(ready)).checks.database.ok).toBe(false)

    // The database answers again on the same address: the pool reconnects, nothing restarted.
    await relay.restore()
    await waitFor(async () => ((await list()).status === 200 ? true : undefined), "the server serving again")
    await waitFor(async () => ((await server!.request("/health/ready", { auth: null })).status === 200 ? true : undefined), "ready again")
  })

  it("finishes, once, a task whose run ended while the database was away, after its lease lapsed", async () => {
    await server?.close()
    llm = await startFakeLlm({ defaultReply: { text: "the answer comes slowly, word by word", chunkDelayMs: 300 } })
    const relay = await throughRelay({ ...fakeLlmEnv(llm), TASK_LEASE_SECONDS: "2", TASK_POLL_MS: "500", LLM_MAX_RETRIES: "0" })
    const session = (await json(
      await server!.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: "outage-task" }) })
    )).session_id as string
    const queued = await server!.request(`/api/v1/sessions/${session}/messages`, {
      method: "POST",
      body: JSON.stringify({ content: "answer me through the outage", source: "test", run_agent: true, notify: false })
    })
    expect(queued.status).toBe(200)
    const taskId = (await json(queued)).task_id as string
    const task = async () => (await json(await server!.request(`/api/v1/tasks/${taskId}`))) as { status: string; run_id: string | null }
    await waitFor(async () => ((await task()).run_id ? true : undefined), "the task's run under way")

    // Away for longer than the worker retries recording the run's end (a lease), so only the lapsed lease brings it back.
    await relay.cut()
    await sleep(scaled(6000))
    await relay.restore()

    const done = await waitFor(
      async () => {
        const state = await task().catch(() => undefined)
        return state && state.status !== "pending" && state.status !== "running" ? state : undefined
      },
      "the task finished after the outage",
      40_000
    )
    expect(done.status).toBe("complete")
    const messages = (await json(await server!.request(`/api/v1/sessions/${session}/messages`))) as Array<{ role: string; content: string }>
    expect(messages.filter((m) => m.role === "user" && m.content === "answer me through the outage")).toHaveLength(1)
    expect(messages.filter((m) => m.role === "assistant")).toHaveLength(1)
  })
})
