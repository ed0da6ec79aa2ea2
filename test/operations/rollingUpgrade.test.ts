/**
 * A rolling upgrade on one PostgreSQL (issue 61 item 6). The previous release is the code as it was
 * before the newest migration (test/support/previousRelease.ts). The database is migrated by this release first, so the older code runs on
 * the newer schema, as it does while hosts are replaced one at a time. Under steady chat traffic
 * through a balancer, the old host is drained and replaced by a new one: every answered message is
 * stored once, no request fails, and what one release wrote the other reads.
 */
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { checkOutPreviousRelease } from "../support/previousRelease.ts"
import { type RoundRobinProxy, startProxy } from "../support/proxy.ts"
import { type ChildServer, json, makeRequest, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

describe("a rolling upgrade from the previous release (postgres)", () => {
  let llm: FakeLlm
  let db: TestDatabase
  let previousRoot: string
  let proxy: RoundRobinProxy | undefined
  const servers: Array<ChildServer> = []

  beforeAll(async () => {
    previousRoot = checkOutPreviousRelease()
    llm = await startFakeLlm({ defaultReply: { text: "Answered." } })
    db = await createTestDatabase("postgres", { migrated: true })
  }, scaled(60_000))

  afterAll(async () => {
    await proxy?.close()
    await Promise.all(servers.map((server) => server.stop("SIGKILL")))
    await db?.drop()
    await llm?.close()
    if (previousRoot) fs.rmSync(previousRoot, { recursive: true, force: true })
  })

  it("serves without a failed request while the old host is drained and replaced, each release reading what the other wrote", async () => {
    // The balancer checks readiness every 100 ms; a draining host waits well past that before it stops taking requests.
    const env = { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "1", DRAIN_DELAY_MS: "2000", SHUTDOWN_GRACE_MS: "10000" }
    const old = await spawnServer(db, { ...env, CAIRN_FROM_SOURCE: "1" }, [], previousRoot)
    servers.push(old)
    const current = await spawnServer(db, env)
    servers.push(current)

    // What the old release makes, the new one reads, and the other way round.
    const made = await old.request("/api/v1/admin/channels", {
      method: "POST",
      body: JSON.stringify({ name: "made by the previous release", bot_id: "default" })
    })
    expect(made.status).toBe(201)
    const channel = (await json(made)).id as string
    expect((await json(await current.request(`/api/v1/channels/${channel}`))).name).toBe("made by the previous release")
    const answered = await current.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "hello from new", client_id: "upgrade-a" })
    })
    expect(answered.status).toBe(200)
    const session = (await json(answered)).session_id as string
    const read = await old.request(`/api/v1/sessions/${session}/messages`)
    expect(read.status).toBe(200)
    expect(((await json(read)) as Array<{ content: string }>).map((m) => m.content)).toContain("hello from new")

    // Steady traffic through the balancer while the old host is drained and a new one takes its place.
    proxy = await startProxy([old.baseUrl, current.baseUrl], { readinessEveryMs: 100 })
    const request = makeRequest(proxy.url)
    const sent: Array<{ text: string; status: number; session?: string }> = []
    let stop = false
    const traffic = (async () => {
      for (let n = 0; !stop; n++) {
        const text = `rolling ${n}`
        const response = await request("/chat", { method: "POST", body: JSON.stringify({ message: text, client_id: `upgrade-${n % 4}` }) })
        const body = await json(response).catch(() => ({}))
        sent.push({ text, status: response.status, session: body.session_id })
      }
    })()
    const until = async (count: number) => {
      while (sent.length < count) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await until(10)
    expect(await old.stop("SIGTERM")).toBe(0)
    const replacement = await spawnServer(db, env)
    servers.push(replacement)
    proxy.add(replacement.baseUrl)
    await until(sent.length + 10)
    stop = true
    await traffic

    expect(sent.filter((s) => s.status !== 200)).toEqual([])
    // Each answered message is stored once, whichever host took it.
    for (const s of sent) {
      const messages = (await json(await replacement.request(`/api/v1/sessions/${s.session}/messages`))) as Array<
        { role: string; content: string }
      >
      expect(messages.filter((m) => m.role === "user" && m.content === s.text), s.text).toHaveLength(1)
    }
  }, 3 * spawnDeadlineMs + scaled(120_000))
})
