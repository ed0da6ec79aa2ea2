/**
 * Memory pressure, with the soft limit lowered at runtime below what any server takes: new runs
 * are refused with 503 and Retry-After on every surface, a stream opened before finishes, a task
 * queued meanwhile waits and runs once the pressure is gone; liveness stays up, readiness says
 * shedding.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, taskEnded, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { scaled, waitFor } from "../support/time.ts"

describe.each(backends)("memory pressure (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  const setSoftLimit = async (mb: number) => {
    const response = await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ MEMORY_SOFT_LIMIT_MB: mb }) })
    expect(response.status).toBe(200)
  }
  const readiness = async () => {
    const response = await server.request("/health/ready", { auth: null })
    return { status: response.status, body: await json(response) }
  }
  const queueTask = async (content: string) => {
    const { session_id } = await json(
      await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: `pressure-${content}` }) })
    )
    const injected = await json(
      await server.request(`/api/v1/sessions/${session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content, source: "test", run_agent: true, notify: false })
      })
    )
    return injected.task_id as string
  }

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      // A long safety poll: the queued task must be started by the pressure going, not by the poll.
      env: { ...fakeLlmEnv(llm), MEMORY_SAMPLE_MS: "50", TASK_POLL_MS: "600000" }
    })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("refuses new runs with 503 and Retry-After, lets the open stream finish, and keeps the queued task", async () => {
    expect((await readiness()).status).toBe(200)
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ")
    llm.script({ text: words, chunkDelayMs: scaled(250) })
    const stream = readSse(
      await server.request("/chat/stream", { method: "POST", body: JSON.stringify({ message: "Go slowly", client_id: "before-pressure" }) })
    )
    await stream.until((event) => event.data.type === "assistant_text")

    await setSoftLimit(1)
    try {
      const shedding = await waitFor(async () => {
        const ready = await readiness()
        return ready.status === 503 ? ready.body : undefined
      }, "readiness to say shedding")
      expect(shedding.status).toBe("shedding")
      expect(shedding.checks.memory.ok).toBe(false)
      expect(shedding.checks.memory.detail).toMatch(/^shedding: /)
      expect(shedding.checks.database.ok).toBe(true)

      // Every surface that starts a run refuses it, in its error shape, saying when to retry.
      const chat = await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "hi", client_id: "during" }) })
      expect(chat.status).toBe(503)
      expect(Number(chat.headers.get("retry-after"))).toBeGreaterThan(0)
      const body = await json(chat)
      expect(Object.keys(body)).toEqual(["detail"])
      expect(body.detail).toContain("short of memory")
      const streamed = await server.request("/chat/stream", {
        method: "POST",
        body: JSON.stringify({ message: "hi", client_id: "during" })
      })
      expect(streamed.status).toBe(503)
      expect(streamed.headers.get("retry-after")).not.toBeNull()
      const openai = await server.request("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "default", messages: [{ role: "user", content: "hi" }] })
      })
      expect(openai.status).toBe(503)
      expect(openai.headers.get("retry-after")).not.toBeNull()
      expect((await json(openai)).error.type).toBe("server_error")

      // Liveness is unaffected; a passive message (no run) is still stored.
      expect((await server.request("/health", { auth: null })).status).toBe(200)
      const passive = await server.request("/chat", {
        method: "POST",
        body: JSON.stringify({ message: "just a note", client_id: "during", passive: true })
      })
      expect(passive.status).toBe(200)

      // A task queued now waits in the queue.
      const taskId = await queueTask("queued under pressure")

      // The stream opened before the pressure goes on to its answer, untouched.
      const rest = await stream.rest()
      const types = rest.map((event) => event.data.type)
      expect(types).toContain("assistant_text")
      expect(types).not.toContain("error")
      expect(types.at(-1)).toBe("response")
      expect(rest.at(-1)!.data.text ?? rest.at(-1)!.data.response).toBeDefined()

      expect((await json(await server.request(`/api/v1/tasks/${taskId}`))).status).toBe("pending")
      // Only the stream reached the model.
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)

      // The pressure goes: readiness is back, the waiting task runs, new runs start.
      await setSoftLimit(0)
      await waitFor(async () => ((await readiness()).status === 200 ? true : undefined), "readiness back")
      expect(await taskEnded(server, taskId)).toMatchObject({ status: "complete", result: "ok" })
      const after = await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "hi", client_id: "after" }) })
      expect(after.status).toBe(200)
    } finally {
      await setSoftLimit(0)
    }
  })
})
