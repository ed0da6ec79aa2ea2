/**
 * A task answered once across a kill between its run's end and its completion (issue 61), on both
 * databases, with real `cairn serve` processes: the server kills itself with SIGKILL right after
 * the run's end stored the answer and before the task was marked done (CAIRN_FAULT_KILL_AT=after-run,
 * docs/operations.md "Fault injection"). The restarted server takes the task up again and finds its
 * run answered: the task completes with that answer, delivered once, and the model is not asked again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { type ChildServer, json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled, until } from "../support/time.ts"

describe.each(backends)("a task answered once across a kill after its run's end (%s)", (backend) => {
  let llm: FakeLlm
  let receiver: WebhookReceiver
  let db: TestDatabase
  const children: Array<ChildServer> = []
  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "the only answer" } })
    receiver = await startReceiver({ status: 204 })
    db = await createTestDatabase(backend, { migrated: true })
  })
  afterAll(async () => {
    for (const child of children) await child.stop("SIGKILL")
    await receiver?.close()
    await llm?.close()
    await db?.drop()
  })

  it("the restarted server completes the task from its stored answer and does not answer again", async () => {
    const env = {
      ...fakeLlmEnv(llm),
      LOG_LEVEL: "warning",
      TASK_POLL_MS: "100",
      WEBHOOK_ALLOWED_HOSTS: "127.0.0.1"
    }
    const first = await spawnServer(db, { ...env, CAIRN_FAULT_KILL_AT: "after-run" })
    children.push(first)
    const died = new Promise((resolve) => first.process.once("exit", resolve))
    const { session_id } = await json(
      await first.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: "answer-once" }) })
    )
    const injected = await json(
      await first.request(`/api/v1/sessions/${session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({
          content: "answer me once",
          run_agent: true,
          notify: true,
          dispatch_type: "webhook",
          dispatch_config: { url: receiver.url }
        })
      })
    )
    await died
    expect(first.process.signalCode).toBe("SIGKILL")
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)

    // Restarted on the same host: the dead process's task goes back to the queue at once.
    const second = await spawnServer(db, env)
    children.push(second)
    const task = await until(
      () => second.request(`/api/v1/tasks/${injected.task_id}`).then(json),
      (t) => t.status !== "pending" && t.status !== "running",
      60_000
    )
    expect(task).toMatchObject({ status: "complete", result: "the only answer", attempts: 2 })
    await receiver.waitFor(1)
    const messages = await json(await second.request(`/api/v1/sessions/${session_id}/messages`))
    expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "answer me once"],
      ["assistant", "the only answer"]
    ])
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)
    expect(receiver.requests.map((r) => JSON.parse(r.body).result)).toEqual(["the only answer"])
    expect(await second.stop("SIGTERM")).toBe(0)
  }, 2 * spawnDeadlineMs + scaled(90_000))
})
