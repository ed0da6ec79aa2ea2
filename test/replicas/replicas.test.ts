/**
 * Three `cairn serve` processes on one fresh PostgreSQL behind a round-robin proxy (issue 25's
 * proof): every call goes through the proxy only, which says which process answered. Streams
 * rejoined, cancels, approvals and client-tool results land on another process than the run's;
 * 300 tasks drain exactly once; a rate limit holds across the processes; one integration worker
 * runs; and after `kill -9` of one process mid-run every accepted message is stored and every
 * task finishes once.
 */
import * as fs from "node:fs"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, tempDir, type TestDatabase } from "../support/database.ts"
import { writeIntegration } from "../support/integrations.ts"
import { type RoundRobinProxy, startProxy } from "../support/proxy.ts"
import { type ChildServer, json, makeRequest, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { scaled, sleep, until } from "../support/time.ts"

describe("three server processes behind a load balancer (postgres)", () => {
  const dir = tempDir("cairn-replicas-")
  let llm: FakeLlm
  let db: TestDatabase
  let proxy: RoundRobinProxy
  let servers: Array<ChildServer> = []
  let request: ReturnType<typeof makeRequest>
  let clients = 0
  const client = () => `replica-client-${++clients}`

  const upstream = (response: Response) => Number(response.headers.get("x-upstream"))

  /** A stream through the proxy, and the process that runs it. */
  const stream = async (body: Record<string, unknown>) => {
    const controller = new AbortController()
    const response = await request("/chat/stream", { method: "POST", body: JSON.stringify(body), signal: controller.signal })
    expect(response.status).toBe(200)
    return { sse: readSse(response, controller), at: upstream(response) }
  }

  /** Sends requests through the proxy, skipping turns until the next one lands away from `at`. */
  const awayFrom = async (at: number) => {
    while (proxy.next() === at) await request("/health", { auth: null })
  }

  beforeAll(async () => {
    writeIntegration(dir, "poller", {
      "worker.ts": `export default {
  name: "poll",
  singleton: true,
  run: async (_cairn, worker) => {
    while (await worker.sleep(200)) {}
  }
}
`
    })
    llm = await startFakeLlm({ record: true })
    db = await createTestDatabase("postgres", { migrated: true })
    const env = {
      ...fakeLlmEnv(llm),
      LLM_MAX_RETRIES: "1",
      LOG_LEVEL: "warning",
      TASK_CONCURRENCY: "4",
      // Short enough for the kill -9 case to recover within the test, long enough that a loaded
      // machine renews in time.
      TASK_LEASE_SECONDS: "10",
      CLIENT_TOOL_TIMEOUT_SECONDS: "30",
      INTEGRATION_DIRS: dir,
      LEADER_RETRY_MS: "300",
      LEADER_CHECK_MS: "500"
    }
    // One first, so the migrations run once; then two more.
    servers = [await spawnServer(db, env)]
    servers.push(...(await Promise.all([spawnServer(db, env), spawnServer(db, env)])))
    proxy = await startProxy(servers.map((server) => server.baseUrl))
    request = makeRequest(proxy.url)
    const bot = await request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({
        id: "toolbot",
        name: "Tool Bot",
        tools: ["current_time"],
        client_tools: [{ name: "get_location", description: "Where the user is" }],
        tool_policies: { current_time: "require_approval" }
      })
    })
    expect(bot.status).toBe(201)
    // Two starts in turn (the first alone, then two together).
  }, 2 * spawnDeadlineMs + scaled(60_000))

  afterAll(async () => {
    await proxy?.close()
    await Promise.all(servers.map((server) => server.stop("SIGKILL")))
    await llm?.close()
    await db?.drop()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  /**
   * Streams `words` on one process, leaves after the word `leaveAfter` and rejoins the session's
   * stream on another one from the last event seen: what was seen, and the rejoined stream.
   */
  const rejoinElsewhere = async (words: string, chunkDelayMs: number, leaveAfter: string, hangAfterChunks?: number) => {
    llm.script({ text: words, chunkDelayMs, ...(hangAfterChunks === undefined ? {} : { hangAfterChunks }) })
    const clientId = client()
    const { sse, at } = await stream({ message: "Go", client_id: clientId })
    const seen = await sse.until((e) => e.data.type === "assistant_text" && e.data.text.split(" ").includes(leaveAfter))
    sse.abort()
    const sessionId = await sessionOf(clientId)
    await awayFrom(at)
    const rejoin = await request(`/api/v1/sessions/${sessionId}/stream`, { headers: { "last-event-id": String(seen.at(-1)!.id) } })
    expect(rejoin.status).toBe(200)
    expect(upstream(rejoin)).not.toBe(at)
    return { seen, rejoined: readSse(rejoin), clientId }
  }
  const numberedFromOne = (events: ReadonlyArray<{ readonly id: number | undefined }>) => {
    const ids = events.map((e) => e.id)
    expect(ids).toEqual(ids.map((_, i) => i + 1))
  }

  it("rejoins a stream on another process with no gap and no duplicate", async () => {
    const { seen, rejoined } = await rejoinElsewhere("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", 80, "w3")
    const rest = await rejoined.rest()
    numberedFromOne([...seen, ...rest])
    expect(rest.at(-1)!.data).toMatchObject({ type: "response", text: "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10" })
  })

  it("hands a long run's events to a reader on another process while it runs, not only at its end", async () => {
    // The provider sends six of the twelve words and then holds the stream open: the run cannot end
    // until it is cancelled, so a reader elsewhere that has w6 had it while the run was running.
    // (Were events written only with the end, none after w2 would reach it before the cancel.)
    const { seen, rejoined, clientId } = await rejoinElsewhere("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12", 150, "w2", 6)
    const middle = await rejoined.until((e) => e.data.type === "assistant_text" && e.data.text.split(" ").includes("w6"))
    expect(middle.some((e) => e.data.type === "response" || e.data.type === "cancelled")).toBe(false)
    const cancel = await request("/chat/cancel", { method: "POST", body: JSON.stringify({ client_id: clientId, bot_id: "default" }) })
    expect(await json(cancel)).toMatchObject({ cancelled: true })
    const rest = await rejoined.rest()
    expect(rest.at(-1)!.data.type).toBe("cancelled")
    expect(rest.some((e) => e.data.type === "assistant_text" && e.data.text.split(" ").includes("w7"))).toBe(false)
    numberedFromOne([...seen, ...middle, ...rest])
  })

  it("cancels a run from another process", async () => {
    // The provider sends three words and holds the stream open: only the cancel ends the run. The
    // bus brings it at once, the run's heartbeat (every 5 s) at the latest: how soon is a timing
    // (bench/replicas.ts measures the bus's latency), not this test's to assert.
    llm.script({ text: "a b c d e f g h i j k l m n o p q r s t", chunkDelayMs: 200, hangAfterChunks: 3 })
    const clientId = client()
    const { sse, at } = await stream({ message: "Talk slowly", client_id: clientId })
    await sse.until((e) => e.data.type === "assistant_text")
    await awayFrom(at)
    const cancel = await request("/chat/cancel", { method: "POST", body: JSON.stringify({ client_id: clientId, bot_id: "default" }) })
    expect(upstream(cancel)).not.toBe(at)
    expect(await json(cancel)).toEqual({ cancelled: true, queued_tasks_cancelled: 0 })
    const rest = await sse.rest()
    expect(rest.at(-1)!.data.type).toBe("cancelled")
  })

  it("takes an approval decided on another process", async () => {
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "Done" })
    const { sse, at } = await stream({ message: "What time is it?", bot_id: "toolbot", client_id: client() })
    const ask = (await sse.until((e) => e.data.type === "approval_request")).at(-1)!.data
    await awayFrom(at)
    const decided = await request(`/api/v1/approvals/${ask.approval_id}/decide`, {
      method: "POST",
      body: JSON.stringify({ approved: true })
    })
    expect(upstream(decided)).not.toBe(at)
    expect(decided.status).toBe(200)
    const after = await sse.rest()
    expect(after[0]!.data).toMatchObject({ type: "approval_resolved", approval_id: ask.approval_id, approved: true })
    expect(after.find((e) => e.data.type === "tool_result")!.data.result).toContain("time_zone")
    expect(after.at(-1)!.data).toMatchObject({ type: "response", text: "Done" })
  })

  it("takes a client-tool result posted to another process; an unknown id is a 404 on any", async () => {
    llm.script({ toolCalls: [{ name: "get_location", arguments: "{}" }] }, { text: "You are in Oslo" })
    const { sse, at } = await stream({ message: "Where am I?", bot_id: "toolbot", client_id: client() })
    const ask = (await sse.until((e) => e.data.type === "tool_request")).at(-1)!.data
    const unknown = await request("/chat/tool_result", { method: "POST", body: JSON.stringify({ request_id: "nope", result: "x" }) })
    expect(unknown.status).toBe(404)
    await awayFrom(at)
    const posted = await request("/chat/tool_result", {
      method: "POST",
      body: JSON.stringify({ request_id: ask.request_id, result: "Oslo, Norway" })
    })
    expect(upstream(posted)).not.toBe(at)
    expect(posted.status).toBeLessThan(300)
    // Answered once: a second answer, on whichever process, finds nothing pending.
    const again = await request("/chat/tool_result", {
      method: "POST",
      body: JSON.stringify({ request_id: ask.request_id, result: "Bergen" })
    })
    expect(again.status).toBe(404)
    const after = await sse.rest()
    expect(after.find((e) => e.data.type === "tool_result")!.data.result).toBe("Oslo, Norway")
    expect(after.at(-1)!.data).toMatchObject({ type: "response", text: "You are in Oslo" })
  })

  it("runs the singleton integration worker in exactly one process", async () => {
    const states = await until(
      () =>
        Promise.all(
          servers.map(() =>
            request("/api/v1/admin/integrations/poller/workers").then(async (r) => [upstream(r), (await json(r)).workers[0].state] as const)
          )
        ),
      (all) =>
        all.filter(([, state]) => state === "running").length === 1 && all.filter(([, state]) => state === "leader_elsewhere").length === 2,
      20_000,
      "one leader"
    )
    expect(new Set(states.map(([at]) => at)).size).toBe(3)
  })

  it("holds a per-key rate limit across the three processes (within 10 %)", async () => {
    const created = await request("/api/v1/admin/api-keys", {
      method: "POST",
      body: JSON.stringify({ name: "limited", scopes: ["settings:read"] })
    })
    expect(created.status).toBe(201)
    const key = (await json(created)).key as string
    const set = await request("/api/v1/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ RATE_LIMIT_ENABLED: true, RATE_LIMIT_DEFAULT: "30/hour" })
    })
    expect(set.status).toBe(200)
    // Every process's settings snapshot refreshes within 2 s (no process tells when it has: a wait,
    // stretched on a busy machine).
    await sleep(scaled(2_500))
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () => request("/api/v1/admin/settings", { auth: key }).then((r) => [upstream(r), r.status] as const))
    )
    const allowed = statuses.filter(([, status]) => status === 200).length
    expect(statuses.filter(([, status]) => status !== 200 && status !== 429)).toEqual([])
    expect(allowed).toBeGreaterThanOrEqual(27)
    expect(allowed).toBeLessThanOrEqual(33)
    // Each process both let some through and refused some: one bucket, not three.
    for (const at of [0, 1, 2]) expect(statuses.filter(([u]) => u === at).length).toBe(20)
    const off = await request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ RATE_LIMIT_ENABLED: false }) })
    expect(off.status).toBe(200)
    await sleep(scaled(2_500))
  })

  it("drains 300 tasks queued through the proxy, each run exactly once by one of the processes", async () => {
    llm.reset()
    const count = 300
    const prompts = Array.from({ length: count }, (_, i) => `task-${i}`)
    for (let start = 0; start < count; start += 20) {
      await Promise.all(
        prompts.slice(start, start + 20).map(async (prompt) => {
          const { session_id } = await json(
            await request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: prompt }) })
          )
          const response = await request(`/api/v1/sessions/${session_id}/messages`, {
            method: "POST",
            body: JSON.stringify({ content: prompt, source: "load", run_agent: true, notify: false })
          })
          expect(response.status).toBe(200)
        })
      )
    }
    const finished = await until(
      () => request("/api/v1/tasks?limit=500").then(json),
      (list: Array<{ status: string; attempts: number }>) =>
        list.filter((t) => t.status === "complete" || t.status === "failed").length >= count,
      90_000,
      "300 tasks finished"
    )
    const load = finished.filter((t: { prompt?: string; status: string }) => t.status === "complete")
    expect(load.length).toBeGreaterThanOrEqual(count)
    expect(finished.every((t: { attempts: number }) => t.attempts === 1)).toBe(true)
    const perPrompt = new Map<string, number>()
    for (const call of llm.requestsTo("/v1/chat/completions")) {
      const prompt = call.body.messages.filter((m: { role: string }) => m.role === "user").at(-1).content as string
      perPrompt.set(prompt, (perPrompt.get(prompt) ?? 0) + 1)
    }
    expect(prompts.filter((prompt) => perPrompt.get(prompt) !== 1)).toEqual([])
    const { rows } = await query<{ worker: string; n: number }>("SELECT worker, count(*)::int AS n FROM tasks GROUP BY worker")
    expect(rows).toHaveLength(3)
  }, scaled(150_000))

  it("after kill -9 of one process mid-run, every accepted message is stored and every task finishes once", async () => {
    llm.reset()
    // Slow answers, so runs are under way on every process when one dies.
    llm.setDefaultReply({ text: "slow answer here", chunkDelayMs: 150 })
    const count = 24
    const accepted: Array<{ session: string; prompt: string; task: string }> = []
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const prompt = `crash-${i}`
        const { session_id } = await json(
          await request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: prompt }) })
        )
        const response = await request(`/api/v1/sessions/${session_id}/messages`, {
          method: "POST",
          body: JSON.stringify({ content: prompt, source: "load", run_agent: true, notify: false })
        })
        expect(response.status).toBe(200)
        accepted.push({ session: session_id, prompt, task: (await json(response)).task_id })
      })
    )
    const victim = servers[1]!
    await until(
      () =>
        query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE status = 'running' AND owner LIKE $1", [`%${victim.process.pid}%`]),
      (result) => result.rows[0]!.n > 0,
      20_000,
      "a run on the victim"
    )
    // kill -9, and once it is gone keep sending through the proxy: the dead process is skipped.
    // (In the instant between the signal and the exit a connection may be taken and reset: a load
    // balancer answers 502 then, and that message was never accepted.)
    await victim.stop("SIGKILL")
    for (let i = 0; i < 6; i++) {
      const prompt = `after-${i}`
      const created = await request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: prompt }) })
      expect(created.status).toBe(200)
      const { session_id } = await json(created)
      const response = await request(`/api/v1/sessions/${session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: prompt, source: "load", run_agent: true, notify: false })
      })
      expect(response.status).toBe(200)
      accepted.push({ session: session_id, prompt, task: (await json(response)).task_id })
    }
    for (const { task } of accepted) {
      await until(() => request(`/api/v1/tasks/${task}`).then(json), (t) => t.status === "complete", 60_000, `task ${task}`)
    }
    for (const { session, prompt } of accepted) {
      const messages = await json(await request(`/api/v1/sessions/${session}/messages`))
      expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ["user", prompt],
        ["assistant", "slow answer here"]
      ])
    }
    llm.setDefaultReply({ text: "ok" })
  }, scaled(120_000))

  /** The session of (client, default bot): creating it answers the existing one. */
  const sessionOf = async (clientId: string) =>
    (await json(await request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: clientId }) }))).session_id as string

  const query = async <R extends pg.QueryResultRow>(text: string, values: Array<unknown> = []) => {
    const connection = new pg.Client({ connectionString: db.databaseUrl })
    await connection.connect()
    try {
      return await connection.query<R>(text, values)
    } finally {
      await connection.end()
    }
  }
})
