/**
 * The task worker starts a task when it is told something changed, not on its safety poll: here the
 * poll is ten minutes, so a task that waited for it would fail the test. (Lease recovery, told the
 * same way, is test/tasks/crash.test.ts's first case.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, taskEnded, type TestServer } from "../support/server.ts"

describe.each(backends)("the task worker wakes on notices (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  const taskOf = async (id: string) => json(await server.request(`/api/v1/tasks/${id}`))
  const queue = async (content: string) => {
    const { session_id } = await json(
      await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: `wakes-${content}` }) })
    )
    const injected = await json(
      await server.request(`/api/v1/sessions/${session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content, source: "test", run_agent: true, notify: false })
      })
    )
    return injected.task_id as string
  }
  const pause = (paused: boolean) =>
    server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ SYSTEM_PAUSED: paused }) })

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test-fake-key-1234567890", DEFAULT_MODEL: "fake-model", TASK_POLL_MS: "600000" }
    })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("a queued task runs at once", async () => {
    expect(await taskEnded(server, await queue("now"), 10_000)).toMatchObject({ status: "complete", result: "ok" })
  })

  it("a task queued while the system is paused waits, and runs as soon as it is unpaused", async () => {
    expect((await pause(true)).status).toBe(200)
    try {
      const calls = llm.requestsTo("/v1/chat/completions").length
      const id = await queue("after the pause")
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect((await taskOf(id)).status).toBe("pending")
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(calls)
      expect((await pause(false)).status).toBe(200)
      expect(await taskEnded(server, id, 10_000)).toMatchObject({ status: "complete", result: "ok" })
    } finally {
      await pause(false)
    }
  })
})
