/**
 * Logs and traces after real turns: the turn log (bot, session, model, tokens, tools, outcome), the
 * tool-call audit with a secret argument masked, a turn's trace (turn, LLM calls, tools, hooks, nested
 * by parent), a failed turn logged as failed, paging and filters, and the log level changed while the
 * server runs (seen in its output).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Hooks } from "../../src/hooks/Hooks.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase } from "../support/database.ts"
import { json, spawnDeadlineMs, spawnServer, startServer, type TestServer } from "../support/server.ts"
import { scaled, waitFor } from "../support/time.ts"

// Built at runtime so no credential-shaped literal sits in the repository.
const githubToken = "ghp_" + "Zq8Lm2Xv7Rt4Np1Ks9Wd3Yb6Hc5Jf0Ga8Ue2"

describe.each(backends)("logs, tool-call audit and traces (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let sessionId: string
  let runId: string

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Done." } })
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-logs-test", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    })
    expect(
      (await server.request("/api/v1/admin/bots", {
        method: "POST",
        body: JSON.stringify({ id: "scribe", name: "Scribe", tools: ["@memory"] })
      })).status
    ).toBe(201)
    await server.run(Effect.flatMap(Hooks, (hooks) => Effect.sync(() => hooks.registerHook("after_tool_call", () => undefined))))
    llm.script(
      {
        toolCalls: [{
          name: "remember",
          arguments: JSON.stringify({ note: `deploy with ${githubToken}`, title: "Deploy", api_key: "hunter2" })
        }]
      },
      { text: "Noted." }
    )
    const response = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "remember the deploy token", bot_id: "scribe" })
    })
    expect(response.status).toBe(200)
    sessionId = (await json(response)).session_id
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("logs the turn: bot, session, model, tokens, LLM calls, tools used, duration, outcome", async () => {
    const page = await json(await server.request(`/api/v1/admin/logs?session_id=${sessionId}`))
    expect(page.items).toHaveLength(1)
    const turn = page.items[0]
    runId = turn.correlation_id
    expect(turn).toMatchObject({
      bot_id: "scribe",
      session_id: sessionId,
      model: "fake-model",
      llm_calls: 2,
      tools_used: ["remember"],
      outcome: "complete",
      error: null
    })
    expect(turn.total_tokens).toBeGreaterThan(0)
    expect(turn.total_tokens).toBe(turn.prompt_tokens + turn.completion_tokens)
    expect(turn.duration_ms).toBeGreaterThanOrEqual(0)
    expect(page.next_offset).toBeNull()
  })

  it("audits the tool call with its arguments, secrets masked, and the result's size", async () => {
    const page = await json(await server.request(`/api/v1/admin/tool-calls?session_id=${sessionId}`))
    expect(page.items).toHaveLength(1)
    const call = page.items[0]
    expect(call).toMatchObject({ tool: "remember", bot_id: "scribe", correlation_id: runId, error: null })
    expect(call.arguments).toEqual({ note: "deploy with ****", title: "Deploy", api_key: "****" })
    expect(JSON.stringify(page)).not.toContain(githubToken)
    expect(JSON.stringify(page)).not.toContain("hunter2")
    expect(call.result_chars).toBeGreaterThan(0)
    expect(call.tool_call_id).toBe("call_1")
  })

  it("traces the turn: its LLM calls, the tool and the hook it fired, nested under the turn", async () => {
    const trace = await json(await server.request(`/api/v1/admin/traces/${runId}`))
    expect(trace).toMatchObject({ correlation_id: runId, bot_id: "scribe", session_id: sessionId })
    const kinds = trace.spans.map((span: { kind: string }) => span.kind)
    expect(kinds[0]).toBe("turn")
    expect(kinds.filter((k: string) => k === "llm")).toHaveLength(2)
    const root = trace.spans[0]
    const tool = trace.spans.find((span: { kind: string }) => span.kind === "tool")
    const hook = trace.spans.find((span: { kind: string; name: string }) => span.kind === "hook" && span.name === "after_tool_call")
    expect(tool.parent_id).toBe(root.id)
    expect(hook.parent_id).toBe(root.id)
    expect(hook.attributes).toEqual({ callbacks: 1, webhooks: 0 })
    for (const span of trace.spans.filter((s: { kind: string }) => s.kind === "llm")) {
      expect(span.parent_id).toBe(root.id)
      expect(span.attributes.model).toBe("fake-model")
    }
    const missing = await server.request(`/api/v1/admin/traces/no-such-run`)
    expect(missing.status).toBe(404)
    expect(await json(missing)).toEqual({ detail: "Trace not found: no-such-run" })
  })

  it("logs a failed turn as failed, with the error; filters and pages", async () => {
    llm.script({ status: 400, errorBody: { error: { message: "context too long", type: "invalid_request_error" } } })
    const failed = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "again", bot_id: "scribe", session_id: sessionId })
    })
    expect(failed.status).toBeGreaterThanOrEqual(400)
    const failures = await json(await server.request(`/api/v1/admin/logs?session_id=${sessionId}&outcome=failed`))
    expect(failures.items).toHaveLength(1)
    expect(failures.items[0].error).toContain("context too long")
    const first = await json(await server.request(`/api/v1/admin/logs?session_id=${sessionId}&limit=1`))
    expect(first.items).toHaveLength(1)
    expect(first.next_offset).toBe(1)
    const second = await json(await server.request(`/api/v1/admin/logs?session_id=${sessionId}&limit=1&offset=1`))
    expect(second.items[0].correlation_id).not.toBe(first.items[0].correlation_id)
    expect(second.next_offset).toBeNull()
    const ancient = await server.request(`/api/v1/admin/tool-calls?since=-100000-01-01T00:00:00Z`)
    expect(ancient.status).toBe(422)
    const bad = await server.request(`/api/v1/admin/logs?outcome=exploded&limit=0`)
    expect(bad.status).toBe(422)
    expect([...new Set((await json(bad)).detail.map((issue: { loc: Array<string> }) => issue.loc[1]))].sort()).toEqual(["limit", "outcome"])
  })

  it("needs logs:read to read and logs:write to change the level", async () => {
    const reader = await createKey(server, ["logs:read"])
    expect((await server.request("/api/v1/admin/tool-calls", { auth: reader.key })).status).toBe(200)
    expect(
      (await server.request("/api/v1/admin/log-level", { method: "PUT", auth: reader.key, body: JSON.stringify({ level: "debug" }) }))
        .status
    ).toBe(403)
    const bad = await server.request("/api/v1/admin/log-level", { method: "PUT", body: JSON.stringify({ level: "loud" }) })
    expect(bad.status).toBe(422)
  })
})

describe("the log level, changed while the server runs", () => {
  it("takes effect at once, both ways, and GET reads it back", async () => {
    const db = await createTestDatabase("pglite", { migrated: true })
    const server = await spawnServer(db, { LOG_LEVEL: "error" })
    try {
      expect(await json(await server.request("/api/v1/admin/log-level"))).toEqual({ level: "error" })
      const louder = await server.request("/api/v1/admin/log-level", { method: "PUT", body: JSON.stringify({ level: "info" }) })
      expect(await json(louder)).toEqual({ level: "info" })
      await expect.poll(() => server.output()).toContain("Log level set to info")
      expect(await json(await server.request("/api/v1/admin/log-level"))).toEqual({ level: "info" })
      await server.request("/api/v1/admin/log-level", { method: "PUT", body: JSON.stringify({ level: "error" }) })
      await new Promise((resolve) => setTimeout(resolve, 300))
      // Logged at info, under the new level: not written.
      expect(server.output()).not.toContain("Log level set to error")
      // Nor what the start logged at info under LOG_LEVEL=error: an integration's dispatcher registered.
      expect(server.output()).not.toContain("registered the dispatcher")
    } finally {
      await server.stop()
      await db.drop()
    }
  }, spawnDeadlineMs + scaled(30_000))

  it("governs an integration's logger too: its debug line after every answer is written only at debug", async () => {
    const llm = await startFakeLlm({ defaultReply: { text: "Hello." } })
    const db = await createTestDatabase("pglite", { migrated: true })
    const server = await spawnServer(db, {
      LOG_LEVEL: "info",
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "sk-logs-test",
      DEFAULT_MODEL: "fake-model"
    })
    const turn = async () =>
      expect((await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "hi" }) })).status).toBe(200)
    try {
      // What the start logs goes through the same logger: JSON lines off a terminal, at info.
      const registered = await waitFor(
        () => server.output().split("\n").find((line) => line.includes("registered the dispatcher github")),
        "the github dispatcher's registration logged"
      )
      expect(JSON.parse(registered)).toMatchObject({ logLevel: "INFO", message: "Integration github registered the dispatcher github" })
      // The example integration logs "a bot answered" at debug from its after_response hook.
      await turn()
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(server.output()).not.toContain("a bot answered")
      expect((await server.request("/api/v1/admin/log-level", { method: "PUT", body: JSON.stringify({ level: "debug" }) })).status).toBe(
        200
      )
      await turn()
      await expect.poll(() => server.output()).toContain("a bot answered")
    } finally {
      await server.stop()
      await db.drop()
      await llm.close()
    }
  }, spawnDeadlineMs + scaled(30_000))
})
