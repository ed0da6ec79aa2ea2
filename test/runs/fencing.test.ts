/**
 * Fencing of a run's end (issue 61, found by test/cluster's partition scenario), on both
 * databases: a run another process closed under it (its heartbeat stopped: a host cut off from
 * PostgreSQL, a long pause) writes nothing of its end. Its answer, its partial answer, its end and
 * its task's delivery are dropped (and logged); its task, still this worker's, goes back to the
 * queue and is answered once by the next run. The close is the one another process makes
 * (`RunsRepo.closeRuns`, for a holder it takes for dead), made here on the server's own database.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RunsRepo } from "../../src/runs/Repo.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends } from "../support/database.ts"
import { json, queueForWebhook, startServer, taskEnded, type TestServer } from "../support/server.ts"
import { eventually, waitFor } from "../support/time.ts"

describe.each(backends)("fencing of a run's end (%s)", (backend) => {
  let llm: FakeLlm
  let receiver: WebhookReceiver
  let server: TestServer
  const log: Array<string> = []
  let counter = 0

  beforeAll(async () => {
    llm = await startFakeLlm()
    receiver = await startReceiver({ status: 204 })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "0",
        TASK_POLL_MS: "50",
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1"
      },
      onLog: (line) => log.push(line)
    })
  })
  afterAll(async () => {
    await server?.close()
    await receiver?.close()
    await llm?.close()
  })

  /** A queued message whose answer is POSTed to the receiver: its session and task. */
  const inject = (content: string) => queueForWebhook(server, content, { url: receiver.url, clientId: `fenced-${++counter}` })

  /** The task's run, once it runs. */
  const runOf = (task: string) =>
    waitFor(async () => {
      const row = await json(await server.request(`/api/v1/tasks/${task}`))
      return row.status === "running" && row.run_id ? (row.run_id as string) : undefined
    }, `task ${task}'s run`)

  /**
   * What another process does to a run whose holder it takes for dead (the one running here): closes
   * it, `error` and `response` in its log; how many it closed.
   */
  const closeAsAnotherProcess = () =>
    server.run(
      Effect.gen(function*() {
        const repo = yield* RunsRepo
        const owners = yield* repo.runningOwners
        expect(owners).toHaveLength(1)
        return yield* repo.closeRuns({ owners }, "The server running this session stopped before the run finished")
      }).pipe(Effect.provide(RunsRepo.Default))
    )

  const messagesOf = async (session: string) =>
    (await json(await server.request(`/api/v1/sessions/${session}/messages`))) as Array<
      { role: string; content: string | null; metadata: Record<string, unknown> }
    >

  /** The task ended answered once, by its second run: stored once, delivered once, nothing of the first. */
  const answeredOnce = async (session: string, task: string, first: string, dropped: string) => {
    const ended = await taskEnded(server, task, 30_000)
    expect(ended).toMatchObject({ status: "complete", result: "the second answer" })
    expect(ended.run_id).not.toBe(first)
    const messages = await messagesOf(session)
    expect(messages.map((m) => [m.role, m.content])).toEqual([["user", dropped], ["assistant", "the second answer"]])
    expect(messages.some((m) => m.metadata.run_id === first && m.role === "assistant")).toBe(false)
    await receiver.waitFor(1)
    expect(receiver.requests.map((r) => JSON.parse(r.body) as { task_id: string; result: string })).toEqual([
      expect.objectContaining({ task_id: task, result: "the second answer" })
    ])
    expect(log.some((line) => line.includes(`Run ${first} was closed by another process before its end`))).toBe(true)
  }

  it("a run closed by another process while it answered stores and delivers no answer; its task answers once", async () => {
    let letGo = () => {}
    const held = new Promise<void>((resolve) => (letGo = resolve))
    llm.reset()
    llm.script({ text: "the late answer", waitFor: held }, { text: "the second answer" })
    receiver.requests.length = 0
    const { session, task } = await inject("answer me once")
    const first = await runOf(task)
    await eventually(() => llm.requestsTo("/v1/chat/completions").length === 1, "the first run's model call")
    expect(await closeAsAnotherProcess()).toBe(1)
    // The first run answers now, after its close: its end is fenced out.
    letGo()
    await answeredOnce(session, task, first, "answer me once")
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(2)
  })

  it("a run stopped because another process closed it stores no partial answer; its task answers once", async () => {
    llm.reset()
    llm.script({ text: "a late partial answer that never ends", hangAfterChunks: 3 }, { text: "the second answer" })
    receiver.requests.length = 0
    const { session, task } = await inject("stop me")
    const first = await runOf(task)
    // Its partial answer streamed (and written to its log) before the close.
    await eventually(
      () =>
        server.run(
          Effect.map(
            Effect.flatMap(RunsRepo, (repo) => repo.events(first)),
            (events) => events.some((row) => (row.event as { type?: string }).type === "assistant_text")
          ).pipe(Effect.provide(RunsRepo.Default))
        ),
      "the first run's partial answer"
    )
    expect(await closeAsAnotherProcess()).toBe(1)
    // Its heartbeat finds the run closed and stops it (a lost lock): the partial is dropped.
    await answeredOnce(session, task, first, "stop me")
    expect((await messagesOf(session)).some((m) => m.metadata.cancelled === true)).toBe(false)
  })
})
