/**
 * A task held by a process that is killed is taken by another process as soon as its holder is
 * known dead (its run's heartbeats missed and its listening connection gone from PostgreSQL), not
 * when its lease runs out: here the lease is ten minutes, longer than the test waits, so only the
 * dead-holder sweep (tasks/Worker.ts) can bring the task back. It is answered once, also when the
 * process died after its run's answer was stored and before the task recorded it.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { type ChildServer, json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled, waitFor } from "../support/time.ts"

describe("a killed process's task (postgres)", () => {
  let llm: FakeLlm
  let db: TestDatabase
  const servers: Array<ChildServer> = []

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "slow answer here", chunkDelayMs: 1000 } })
    db = await createTestDatabase("postgres", { migrated: true })
    const env = { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "1", LOG_LEVEL: "warning", TASK_LEASE_SECONDS: "600" }
    servers.push(await spawnServer(db, env), await spawnServer(db, env))
  }, 2 * spawnDeadlineMs + scaled(30_000))

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop("SIGKILL")))
    await db?.drop()
    await llm?.close()
  })

  const holderOf = async (taskId: string) => {
    const connection = new pg.Client({ connectionString: db.databaseUrl })
    await connection.connect()
    try {
      const result = await connection.query<{ worker: string | null }>(
        `SELECT t.worker FROM tasks t JOIN runs r ON r.id = t.run_id
         WHERE t.id = $1 AND t.status = 'running' AND r.status = 'running'`,
        [taskId]
      )
      return result.rows[0]?.worker ?? undefined
    } finally {
      await connection.end()
    }
  }

  /** A new session on `server` with `prompt` queued for a run: its session and task. */
  const queueTurn = async (server: ChildServer, clientId: string, prompt: string) => {
    const session = (await json(
      await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: clientId }) })
    )).session_id as string
    const queued = await server.request(`/api/v1/sessions/${session}/messages`, {
      method: "POST",
      body: JSON.stringify({ content: prompt, source: "load", run_agent: true, notify: false })
    })
    expect(queued.status).toBe(200)
    return { session, taskId: (await json(queued)).task_id as string }
  }

  /** The task completes on `survivor` at its second attempt, its session holding the prompt and one answer. */
  const expectAnsweredOnce = async (survivor: ChildServer, taskId: string, session: string, prompt: string) => {
    const done = await waitFor(
      async () => {
        const task = (await json(await survivor.request(`/api/v1/tasks/${taskId}`))) as { status: string; attempts: number }
        return task.status === "complete" ? task : undefined
      },
      "the task finished by the other process",
      60_000,
      250
    )
    expect(done.attempts).toBe(2)
    const messages = (await json(await survivor.request(`/api/v1/sessions/${session}/messages`))) as Array<
      { role: string; content: string }
    >
    expect(messages.map((m) => [m.role, m.content])).toEqual([["user", prompt], ["assistant", "slow answer here"]])
  }

  it("is answered by another process without waiting for its lease, once", async () => {
    const [first, second] = servers as [ChildServer, ChildServer]
    const { session, taskId } = await queueTurn(first, "dead-holder", "answer me after the crash")
    // Whichever process took it dies mid-run (its run under way: a task claimed but not yet started
    // when its process dies waits for its lease).
    const holder = await waitFor(() => holderOf(taskId), "the task's run under way on a process")
    const victim = servers.find((server) => holder.includes(`:${server.process.pid}:`))!
    expect(victim).toBeDefined()
    await victim.stop("SIGKILL")
    const survivor = victim === first ? second : first

    await expectAnsweredOnce(survivor, taskId, session, "answer me after the crash")
  }, scaled(120_000))
  it("is recorded from its stored answer by another process when its holder died after the run, not answered again", async () => {
    const env = { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "1", LOG_LEVEL: "warning", TASK_LEASE_SECONDS: "600" }
    // This process kills itself once a run's answer is stored, before its task records it.
    const armed = await spawnServer(db, { ...env, CAIRN_FAULT_KILL_AT: "after-run", CAIRN_FAULT_KILL_MATCH: "after its run" })
    for (const server of servers) await server.stop("SIGKILL")
    servers.push(armed)
    const { session, taskId } = await queueTurn(armed, "dead-after-run", "answer me, then die after its run")
    const exited = new Promise<void>((resolve) => armed.process.once("exit", () => resolve()))
    await waitFor(() => holderOf(taskId), "the task's run under way on the armed process")
    // Another process, up while the armed one still runs the turn (so not a start that finds it dead).
    const survivor = await spawnServer(db, env)
    servers.push(survivor)
    await exited

    await expectAnsweredOnce(survivor, taskId, session, "answer me, then die after its run")
  }, 2 * spawnDeadlineMs + scaled(120_000))
})
