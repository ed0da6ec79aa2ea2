/**
 * Crash safety with real `cairn serve` processes: a server killed with SIGKILL mid-task, restarted,
 * completes the task exactly once (both backends); two server processes on one PostgreSQL drain
 * 200 tasks, each run exactly once. The two-process case is PostgreSQL only: PGlite is one
 * in-process database and cannot be shared by two processes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver } from "../hooks/webhookReceiver.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"
import { type ChildServer, json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { scaled, until, waitFor } from "../support/time.ts"

/** Two starts of `cairn serve` in turn, and what the test waits for besides. */
const twoStartsAnd = (ms: number) => 2 * spawnDeadlineMs + scaled(ms)

const llmEnv = (llm: FakeLlm) => ({
  ...fakeLlmEnv(llm),
  LLM_MAX_RETRIES: "1",
  LOG_LEVEL: "warning"
})

describe.each(backends)("task crash safety (%s)", (backend) => {
  let llm: FakeLlm
  let db: TestDatabase
  const children: Array<ChildServer> = []
  beforeAll(async () => {
    llm = await startFakeLlm()
    db = await createTestDatabase(backend, { migrated: true })
  })
  afterAll(async () => {
    for (const child of children) await child.stop("SIGKILL")
    await llm?.close()
    await db?.drop()
  })

  it("a server killed with SIGKILL mid-task is restarted and the task completes exactly once", async () => {
    // A ten-minute safety poll: the recovered task is started because the upkeep that requeues it
    // says so, not because a poll comes round.
    const env = { ...llmEnv(llm), TASK_LEASE_SECONDS: "2", TASK_POLL_MS: "600000" }
    // The first model call never answers: the kill lands while the task runs.
    llm.script({ hang: true })
    const first = await spawnServer(db, env)
    children.push(first)
    const { session_id } = await json(
      await first.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: "crash" }) })
    )
    const injected = await json(
      await first.request(`/api/v1/sessions/${session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "survive the crash", source: "test", run_agent: true, notify: false })
      })
    )
    await until(async () => llm.requestsTo("/v1/chat/completions").length, (n) => n === 1, 30_000)
    expect((await json(await first.request(`/api/v1/tasks/${injected.task_id}`))).status).toBe("running")
    await first.stop("SIGKILL")

    const second = await spawnServer(db, env)
    children.push(second)
    const task = await until(
      () => second.request(`/api/v1/tasks/${injected.task_id}`).then(json),
      (t) => t.status !== "pending" && t.status !== "running",
      60_000
    )
    expect(task).toMatchObject({ status: "complete", result: "ok", attempts: 2, error: null })
    // Give a second run, were there one, the time to show itself.
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(2)
    const messages = await json(await second.request(`/api/v1/sessions/${session_id}/messages`))
    expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "survive the crash"],
      ["assistant", "ok"]
    ])
    expect(await second.stop("SIGTERM")).toBe(0)
  }, twoStartsAnd(120_000))

  it(
    "a restart after SIGKILL mid-chat frees the session at once: the next message answers directly, and the killed run ends in its log",
    async () => {
      // Default leases and heartbeats: nothing here waits for one to lapse.
      const env = llmEnv(llm)
      llm.reset()
      llm.script({ hang: true })
      const first = await spawnServer(db, env)
      children.push(first)
      const sessionId = crypto.randomUUID()
      const controller = new AbortController()
      const streamed = first
        .request("/chat/stream", {
          method: "POST",
          body: JSON.stringify({ message: "cut me off", session_id: sessionId }),
          signal: controller.signal
        })
        .then((response) => response.text())
        .catch(() => "")
      await until(async () => llm.requestsTo("/v1/chat/completions").length, (n) => n === 1, 30_000)
      // A message queued behind the running one, as the killed process left it.
      // Its stream stays open for the queued turn (which never comes here): read to `queued`, then leave.
      const queuedController = new AbortController()
      const queuedResponse = await first.request("/chat/stream", {
        method: "POST",
        body: JSON.stringify({ message: "and this", session_id: sessionId }),
        signal: queuedController.signal
      })
      const queued = await readSse(queuedResponse, queuedController).until((event) => event.data.type === "queued")
      expect(queued.at(-1)!.data.type).toBe("queued")
      queuedController.abort()
      await first.stop("SIGKILL")
      controller.abort()
      await streamed

      llm.script({ text: "queued answer" }, { text: "fresh answer" })
      const second = await spawnServer(db, env)
      children.push(second)
      // The new process ended the killed one's run as it started, knowing that process gone, rather
      // than waiting for its heartbeat to go stale (30 s) or its task's lease to lapse.
      await waitFor(
        () => (second.output().includes("Closed 1 run(s) of a server process that stopped without finishing them") ? true : undefined),
        "the killed process's run closed at start"
      )
      // The queued message runs first (it was waiting), then the next one: neither waits for a lapse.
      const next = await second.request("/chat", {
        method: "POST",
        body: JSON.stringify({ message: "after the restart", session_id: sessionId })
      })
      expect(next.status).toBe(200)
      expect((await json(next)).response).toBe("fresh answer")
      const messages = (await json(await second.request(`/api/v1/sessions/${sessionId}/messages`))) as Array<
        { role: string; content: string }
      >
      expect(messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["cut me off", "and this", "after the restart"])
      expect(await second.stop("SIGTERM")).toBe(0)
      // Read once no server holds the database: no run is left running, and the killed one's log ends
      // as a run's does (an error, then `response`), so a rejoin of it ends too.
      const runs = await withDatabase(
        db,
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ status: string; last: Array<{ type: string }> }>`SELECT status,
            (SELECT jsonb_agg(event ORDER BY seq) FROM (SELECT event, seq FROM run_events WHERE run_id = runs.id ORDER BY seq DESC LIMIT 2) tail) AS last
          FROM runs WHERE session_id = ${sessionId} ORDER BY created_at`)
      )
      expect(runs.map((run) => run.status)).toEqual(["failed", "complete", "complete"])
      expect(runs[0]!.last.map((event) => event.type)).toEqual(["error", "response"])
    },
    twoStartsAnd(60_000)
  )

  it("fails a task whose worker died TASK_MAX_ATTEMPTS times, with a clear error, and still delivers the failure", async () => {
    const receiver = await startReceiver({ status: 204 })
    try {
      const env = {
        ...llmEnv(llm),
        TASK_LEASE_SECONDS: "2",
        TASK_POLL_MS: "100",
        TASK_MAX_ATTEMPTS: "1",
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1"
      }
      llm.reset()
      llm.script({ hang: true })
      const first = await spawnServer(db, env)
      children.push(first)
      const { session_id } = await json(
        await first.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: "doomed" }) })
      )
      const injected = await json(
        await first.request(`/api/v1/sessions/${session_id}/messages`, {
          method: "POST",
          body: JSON.stringify({
            content: "never answered",
            source: "test",
            run_agent: true,
            notify: true,
            dispatch_type: "webhook",
            dispatch_config: { url: `${receiver.url}/late` }
          })
        })
      )
      await until(async () => llm.requestsTo("/v1/chat/completions").length, (n) => n === 1, 30_000)
      await first.stop("SIGKILL")

      const second = await spawnServer(db, env)
      children.push(second)
      const task = await until(
        () => second.request(`/api/v1/tasks/${injected.task_id}`).then(json),
        (t) => t.status === "failed" && t.delivery_status !== "pending",
        60_000
      )
      expect(task).toMatchObject({ status: "failed", attempts: 1, result: null, delivery_status: "delivered" })
      expect(task.error).toBe("The worker running this task stopped (lease expired) 1 times; giving up")
      // Nobody ran it again, and the failure reached the webhook once, through the orphaned-delivery sweep.
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)
      expect(receiver.requests).toHaveLength(1)
      expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ task_id: injected.task_id, status: "failed", result: null })
      expect(await second.stop("SIGTERM")).toBe(0)
    } finally {
      await receiver.close()
    }
  }, twoStartsAnd(120_000))
})

describe("two server processes share one PostgreSQL queue", () => {
  let llm: FakeLlm
  let db: TestDatabase
  const children: Array<ChildServer> = []
  beforeAll(async () => {
    llm = await startFakeLlm()
    db = await createTestDatabase("postgres", { migrated: true })
  })
  afterAll(async () => {
    for (const child of children) await child.stop("SIGKILL")
    await llm?.close()
    await db?.drop()
  })

  it("drains 200 tasks, each run exactly once", async () => {
    const env = { ...llmEnv(llm), TASK_CONCURRENCY: "4", TASK_POLL_MS: "50" }
    const [a, b] = await Promise.all([spawnServer(db, env), spawnServer(db, env)])
    children.push(a!, b!)
    const servers = [a!, b!]
    const count = 200
    const prompts = Array.from({ length: count }, (_, i) => `task-${i}`)
    // Each task in its own session, enqueued through both servers, 10 requests at a time.
    for (let start = 0; start < count; start += 10) {
      await Promise.all(
        prompts.slice(start, start + 10).map(async (prompt, offset) => {
          const server = servers[(start + offset) % 2]!
          const { session_id } = await json(
            await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: prompt }) })
          )
          const response = await server.request(`/api/v1/sessions/${session_id}/messages`, {
            method: "POST",
            body: JSON.stringify({ content: prompt, source: "load", run_agent: true, notify: false })
          })
          expect(response.status).toBe(200)
        })
      )
    }
    const finished = await until(
      () => a!.request("/api/v1/tasks?limit=500").then(json),
      (list: Array<{ status: string; attempts: number }>) =>
        list.filter((t) => t.status === "complete" || t.status === "failed").length === count,
      120_000
    )
    expect(finished.filter((t: { status: string }) => t.status === "complete")).toHaveLength(count)
    expect(finished.every((t: { attempts: number }) => t.attempts === 1)).toBe(true)

    const perPrompt = new Map<string, number>()
    for (const request of llm.requestsTo("/v1/chat/completions")) {
      const users = request.body.messages.filter((m: { role: string }) => m.role === "user")
      const prompt = users.at(-1).content as string
      perPrompt.set(prompt, (perPrompt.get(prompt) ?? 0) + 1)
    }
    expect(perPrompt.size).toBe(count)
    expect([...perPrompt.entries()].filter(([, n]) => n !== 1)).toEqual([])

    // Both processes took part.
    const client = new pg.Client({ connectionString: db.databaseUrl })
    await client.connect()
    try {
      const { rows } = await client.query<{ worker: string; n: number }>("SELECT worker, count(*)::int AS n FROM tasks GROUP BY worker")
      expect(rows).toHaveLength(2)
      for (const row of rows) expect(row.n).toBeGreaterThan(0)
    } finally {
      await client.end()
    }
    for (const server of servers) expect(await server.stop("SIGTERM")).toBe(0)
  }, spawnDeadlineMs + scaled(240_000))
})
