/**
 * A budget holds across two `cairn serve` processes on one PostgreSQL (issue 62): a burst split
 * between them reserves under the same row lock, so together they hold no more than the limit;
 * a budget made on one process applies on the other at once; a process killed mid-call does not keep
 * its reservation: the other process gives it back once the hold is no longer renewed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { type ChildServer, json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { until } from "../support/time.ts"

const usage = { prompt_tokens: 5, completion_tokens: 20, total_tokens: 25 }

describe("budgets across two server processes (postgres)", () => {
  let llm: FakeLlm
  let db: TestDatabase
  let servers: Array<ChildServer> = []

  beforeAll(async () => {
    llm = await startFakeLlm({ record: false, defaultReply: { text: "fine", usage } })
    db = await createTestDatabase("postgres")
    const env = {
      ...fakeLlmEnv(llm),
      LOG_LEVEL: "warning",
      PROVIDER_CONCURRENCY_MAX: "400",
      RUNS_PER_CREDENTIAL_MAX: "400",
      LLM_MAX_RETRIES: "0"
    }
    // One first, so the migrations run once.
    servers = [await spawnServer(db, env)]
    servers.push(await spawnServer(db, env))
  }, spawnDeadlineMs * 2)

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await db?.drop()
    await llm?.close()
  })

  it("caps 200 concurrent completions split between the processes, and each refuses with 429", async () => {
    const [a, b] = servers as [ChildServer, ChildServer]
    const keyResponse = await a.request("/api/v1/admin/api-keys", {
      method: "POST",
      body: JSON.stringify({ name: "budgeted", scopes: ["llm:completions"] })
    })
    expect(keyResponse.status).toBe(201)
    const key = await json(keyResponse)
    const limit = 1000
    const created = await a.request("/api/v1/admin/budgets", {
      method: "POST",
      body: JSON.stringify({ scope: "key", target: key.id, period: "day", limit_tokens: limit })
    })
    expect(created.status).toBe(201)
    const budget = await json(created)
    const status = async () => json(await b.request(`/api/v1/admin/budgets/${budget.id}`))

    let release!: () => void
    llm.setDefaultReply({ text: "fine", usage, waitFor: new Promise<void>((resolve) => (release = resolve)) })
    const answers: Array<{ at: "a" | "b"; status: number; body?: string }> = []
    const calls = Array.from({ length: 200 }, (_, i) => {
      const [server, at] = i % 2 === 0 ? [a, "a" as const] : [b, "b" as const]
      return server
        .request("/api/v1/llm/completions", {
          method: "POST",
          auth: key.key,
          body: JSON.stringify({ messages: [{ role: "user", content: "hello there" }], max_tokens: 50 })
        })
        .then(async (response) => {
          answers.push({ at, status: response.status, ...(response.status === 429 ? {} : { body: await response.text() }) })
          return response
        })
    })
    const during = await until(
      status,
      (now) => now.in_flight > 0 && answers.length + now.in_flight === 200,
      60_000,
      "every call refused or in flight"
    )
    const admitted = during.in_flight as number
    const perCall = during.reserved_tokens / admitted
    expect(admitted * perCall).toBeLessThanOrEqual(limit)
    expect((admitted + 1) * perCall).toBeGreaterThan(limit)
    expect(answers.filter((answer) => answer.status !== 429), "answers before the release").toEqual([])
    // Both processes counted against the one budget.
    expect(answers.some((answer) => answer.at === "a")).toBe(true)
    expect(answers.some((answer) => answer.at === "b")).toBe(true)

    release()
    const all = await Promise.all(calls)
    expect(all.filter((response) => response.status === 200)).toHaveLength(admitted)
    expect(await status()).toMatchObject({ spent_tokens: admitted * usage.total_tokens, reserved_tokens: 0, in_flight: 0 })
  })

  it("gives back the reservation of a call whose process was killed (kill -9) mid-call", async () => {
    const [a, b] = servers as [ChildServer, ChildServer]
    const created = await a.request("/api/v1/admin/budgets", {
      method: "POST",
      body: JSON.stringify({ scope: "global", period: "day", limit_tokens: 100_000 })
    })
    expect(created.status).toBe(201)
    const budget = await json(created)
    const status = async () => json(await b.request(`/api/v1/admin/budgets/${budget.id}`))

    let release!: () => void
    llm.setDefaultReply({ text: "fine", usage, waitFor: new Promise<void>((resolve) => (release = resolve)) })
    try {
      const call = a.request("/api/v1/llm/completions", {
        method: "POST",
        body: JSON.stringify({ messages: [{ role: "user", content: "hello there" }], max_tokens: 50 })
      }).catch(() => undefined)
      const held = await until(status, (now) => now.in_flight === 1, 60_000, "the call to hold its reservation")
      expect(held.reserved_tokens).toBeGreaterThan(0)
      expect(await a.stop("SIGKILL")).toBeNull()
      await call
      // No process renews the hold now: the survivor's sweep gives it back (30 s without renewal, swept every 5 s).
      const after = await until(status, (now) => now.in_flight === 0, 120_000, "the dead process's reservation to be given back")
      expect(after).toMatchObject({ reserved_tokens: 0, spent_tokens: 0 })
    } finally {
      release()
    }
  }, spawnDeadlineMs * 2)
})
