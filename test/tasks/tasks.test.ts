/**
 * Injected messages and tasks end to end against the fake LLM: inject with and without a run, poll
 * the task, each execution_config field, @skill tags, the task list and cancel, bad input.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { foreignTool } from "../../src/agent/Tool.ts"
import { ToolRegistry } from "../../src/agent/Tools.ts"
import { SkillLibrary } from "../../src/skills/Skills.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, taskEnded, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

describe.each(backends)("tasks (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let counter = 0

  const newSession = async (body: Record<string, unknown> = {}) => {
    const response = await server.request("/api/v1/sessions", {
      method: "POST",
      body: JSON.stringify({ client_id: `tasks-${++counter}`, ...body })
    })
    expect(response.status).toBe(200)
    return (await json(response)).session_id as string
  }
  const inject = (sessionId: string, body: Record<string, unknown>) =>
    server.request(`/api/v1/sessions/${sessionId}/messages`, { method: "POST", body: JSON.stringify(body) })
  const messagesOf = async (sessionId: string) => json(await server.request(`/api/v1/sessions/${sessionId}/messages`))
  const completions = () => llm.requestsTo("/v1/chat/completions")

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "1",
        LLM_RETRY_BASE_MS: "10",
        TASK_POLL_MS: "50"
      }
    })
    await server.run(
      Effect.gen(function*() {
        const tools = yield* ToolRegistry
        yield* tools.register(foreignTool({
          name: "lookup_order",
          description: "Finds an order",
          parameters: { type: "object", properties: {} },
          source: "test",
          execute: () => "order 42: shipped"
        }))
        const skills = yield* SkillLibrary
        yield* skills.register({
          id: "integrations/acme/triage",
          title: "Triage",
          content: "# Triage\n\nAlways label with TRIAGE-MARKER.",
          source: "acme"
        })
        yield* skills.register({ id: "tone", title: "Tone", content: "# Tone\n\nBe warm: TONE-MARKER.", source: "test" })
      })
    )
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  it("injects a message without a run: stored as a user message, no task, no model call", async () => {
    const sessionId = await newSession()
    const response = await inject(sessionId, { content: "FYI: the build is green", source: "ci", run_agent: false, notify: false })
    expect(response.status).toBe(200)
    const body = await json(response)
    expect(body).toEqual({ message_id: expect.any(String), session_id: sessionId, task_id: null })
    const messages = await messagesOf(sessionId)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({
      id: body.message_id,
      role: "user",
      content: "FYI: the build is green",
      metadata: { source: "ci", injected: true }
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(completions()).toHaveLength(0)
    expect(await json(await server.request(`/api/v1/tasks?session_id=${sessionId}`))).toEqual([])
  })

  it("injects with a run: the task runs the turn on the stored message, polled to complete", async () => {
    llm.script({ text: "Deploy looks fine" })
    const sessionId = await newSession()
    const body = await json(await inject(sessionId, { content: "Check the deploy", source: "scheduler", run_agent: true, notify: false }))
    expect(body.task_id).toMatch(/^[0-9a-f-]{36}$/)
    const task = await taskEnded(server, body.task_id)
    expect(task).toMatchObject({
      id: body.task_id,
      status: "complete",
      source: "scheduler",
      bot_id: "default",
      session_id: sessionId,
      prompt: "Check the deploy",
      result: "Deploy looks fine",
      error: null,
      dispatch_type: "none",
      dispatch_config: {},
      execution_config: {},
      attempts: 1,
      delivery_status: "none",
      delivery_attempts: 0
    })
    expect(task.started_at).not.toBeNull()
    expect(task.completed_at).not.toBeNull()
    // The stored message is the turn's message: it is not stored twice.
    const messages = await messagesOf(sessionId)
    expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "Check the deploy"],
      ["assistant", "Deploy looks fine"]
    ])
    expect(completions()).toHaveLength(1)
    expect(completions()[0]!.body.messages.at(-1)).toMatchObject({ role: "user", content: "Check the deploy" })
  })

  it("applies each execution_config field for that task only", async () => {
    const sessionId = await newSession()
    const first = await json(
      await inject(sessionId, {
        content: "Handle order 42 @skill:tone",
        source: "acme",
        run_agent: true,
        notify: false,
        execution_config: {
          system_preamble: "PREAMBLE-MARKER: you are handling an acme event.",
          skills: ["integrations/acme/triage", "tone"],
          tools: ["lookup_order"],
          model_override: "fake-model-2"
        }
      })
    )
    const task = await taskEnded(server, first.task_id)
    expect(task.status).toBe("complete")
    expect(task.execution_config).toEqual({
      system_preamble: "PREAMBLE-MARKER: you are handling an acme event.",
      skills: ["integrations/acme/triage", "tone"],
      tools: ["lookup_order"],
      model_override: "fake-model-2"
    })
    const sent = completions()[0]!.body
    expect(sent.model).toBe("fake-model-2")
    const system = sent.messages.filter((m: { role: string }) => m.role === "system").map((m: { content: string }) => m.content).join("\n")
    expect(system).toContain("PREAMBLE-MARKER")
    expect(system).toContain("TRIAGE-MARKER")
    expect(system.match(/TONE-MARKER/g)).toHaveLength(1)
    expect(sent.tools.map((t: { function: { name: string } }) => t.function.name)).toContain("lookup_order")

    // The next task of the same bot has none of it: the bot is unchanged.
    const second = await json(await inject(sessionId, { content: "And now?", source: "acme", run_agent: true, notify: false }))
    expect((await taskEnded(server, second.task_id)).status).toBe("complete")
    const plain = completions()[1]!.body
    expect(plain.model).toBe("fake-model")
    const plainSystem = plain.messages.filter((m: { role: string }) => m.role === "system").map((m: { content: string }) => m.content).join(
      "\n"
    )
    expect(plainSystem).not.toContain("PREAMBLE-MARKER")
    expect(plainSystem).not.toContain("TRIAGE-MARKER")
    expect(plain.tools ?? []).not.toContainEqual(expect.objectContaining({ function: expect.objectContaining({ name: "lookup_order" }) }))
    const bot = await json(await server.request("/api/v1/admin/bots/default"))
    expect(bot.skills ?? []).not.toContain("tone")
  })

  it("merges @skill tags in the message with execution_config.skills", async () => {
    const sessionId = await newSession()
    const body = await json(
      await inject(sessionId, {
        content: "@skill:integrations/acme/triage please, @skill:tone",
        source: "t",
        run_agent: true,
        notify: false,
        execution_config: { skills: ["tone"] }
      })
    )
    expect((await taskEnded(server, body.task_id)).status).toBe("complete")
    const system = completions()[0]!.body.messages[0].content as string
    expect(system).toContain("TRIAGE-MARKER")
    expect(system.match(/TONE-MARKER/g)).toHaveLength(1)
  })

  it("fails the task with a clear error for an unknown skill, in config or in a tag", async () => {
    const sessionId = await newSession()
    const viaConfig = await json(
      await inject(sessionId, {
        content: "go",
        source: "t",
        run_agent: true,
        notify: false,
        execution_config: { skills: ["no-such-skill"] }
      })
    )
    const failed = await taskEnded(server, viaConfig.task_id)
    expect(failed.status).toBe("failed")
    expect(failed.error).toContain("Unknown skill: no-such-skill")
    const viaTag = await json(await inject(sessionId, { content: "go @skill:missing-too", source: "t", run_agent: true, notify: false }))
    expect((await taskEnded(server, viaTag.task_id)).error).toContain("Unknown skill: missing-too")
    expect(completions()).toHaveLength(0)
  })

  it("lists tasks with filters, cancels a pending one, and refuses to cancel a running or finished one", async () => {
    // A slow answer keeps the first task running while the second waits behind it.
    llm.script({ text: Array.from({ length: 100 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 100 })
    const sessionId = await newSession()
    const running = await json(await inject(sessionId, { content: "first", source: "t", run_agent: true, notify: false }))
    const pending = await json(await inject(sessionId, { content: "second", source: "t", run_agent: true, notify: false }))
    await waitFor(() => (completions().length > 0 ? true : undefined), "the first task's model call")
    expect((await json(await server.request(`/api/v1/tasks/${running.task_id}`))).status).toBe("running")
    expect((await json(await server.request(`/api/v1/tasks/${pending.task_id}`))).status).toBe("pending")

    const listed = await json(await server.request(`/api/v1/tasks?session_id=${sessionId}`))
    expect(listed.map((t: { id: string }) => t.id)).toEqual([pending.task_id, running.task_id])
    const onlyPending = await json(await server.request(`/api/v1/tasks?session_id=${sessionId}&status=pending`))
    expect(onlyPending.map((t: { id: string }) => t.id)).toEqual([pending.task_id])
    expect(await json(await server.request(`/api/v1/tasks?session_id=${sessionId}&bot_id=nobody`))).toEqual([])
    expect(await json(await server.request(`/api/v1/tasks?session_id=${sessionId}&limit=1`))).toHaveLength(1)

    const conflict = await server.request(`/api/v1/tasks/${running.task_id}/cancel`, { method: "POST" })
    expect(conflict.status).toBe(409)
    expect((await json(conflict)).detail).toMatch(/is running/)
    const cancelled = await server.request(`/api/v1/tasks/${pending.task_id}/cancel`, { method: "POST" })
    expect(cancelled.status).toBe(200)
    expect((await json(cancelled)).status).toBe("cancelled")
    const again = await server.request(`/api/v1/tasks/${pending.task_id}/cancel`, { method: "POST" })
    expect(again.status).toBe(409)
    expect((await json(again)).detail).toMatch(/already cancelled/)

    // Stop the slow run: its task ends cancelled.
    const stop = await server.request("/chat/cancel", { method: "POST", body: JSON.stringify({ session_id: sessionId }) })
    expect(await json(stop)).toEqual({ cancelled: true, queued_tasks_cancelled: 0 })
    const stopped = await taskEnded(server, running.task_id)
    expect(stopped.status).toBe("cancelled")
    expect(completions()).toHaveLength(1)
  })

  it("rejects bad input with the spec's shapes and changes nothing", async () => {
    const sessionId = await newSession()
    const missing = await inject(sessionId, { source: "t", run_agent: "yes" })
    expect(missing.status).toBe(422)
    const detail = (await json(missing)).detail
    expect(detail.map((d: { loc: Array<string> }) => d.loc.join("."))).toEqual(expect.arrayContaining(["body.content", "body.run_agent"]))
    const badConfig = await inject(sessionId, { content: "x", run_agent: true, execution_config: { skills: "tone", model_override: "" } })
    expect(badConfig.status).toBe(422)
    const badDispatch = await inject(sessionId, { content: "x", run_agent: true, notify: true, dispatch_type: "carrier-pigeon" })
    expect(badDispatch.status).toBe(422)
    expect((await json(badDispatch)).detail[0]).toMatchObject({
      loc: ["body", "dispatch_type"],
      msg: expect.stringContaining("Unknown dispatch_type: carrier-pigeon")
    })
    expect(await messagesOf(sessionId)).toEqual([])

    const unknownSession = await inject("00000000-0000-4000-8000-000000000000", { content: "x" })
    expect(unknownSession.status).toBe(404)
    expect(await json(unknownSession)).toEqual({ detail: "Session not found: 00000000-0000-4000-8000-000000000000" })
    expect((await server.request("/api/v1/tasks/not-a-uuid")).status).toBe(404)
    expect((await server.request("/api/v1/tasks?status=done")).status).toBe(422)
    expect((await server.request("/api/v1/tasks?limit=0")).status).toBe(422)
    expect(await json(await server.request(`/api/v1/tasks?session_id=${sessionId}`))).toEqual([])
  })

  it("requires the scopes: sessions:write to inject, tasks:read to read", async () => {
    const sessionId = await newSession()
    expect((await server.request(`/api/v1/sessions/${sessionId}/messages`, { method: "POST", body: "{}", auth: null })).status).toBe(401)
    expect((await server.request("/api/v1/tasks", { auth: null })).status).toBe(401)
    const key = await json(
      await server.request("/api/v1/admin/api-keys", { method: "POST", body: JSON.stringify({ name: "reader", scopes: ["tasks:read"] }) })
    )
    const token = key.key
    expect(typeof token).toBe("string")
    expect((await server.request("/api/v1/tasks", { auth: token })).status).toBe(200)
    expect(
      (await server.request(`/api/v1/sessions/${sessionId}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "x" }),
        auth: token
      })).status
    ).toBe(403)
    expect((await server.request("/api/v1/tasks/00000000-0000-4000-8000-000000000000/cancel", { method: "POST", auth: token })).status)
      .toBe(403)
  })
})
