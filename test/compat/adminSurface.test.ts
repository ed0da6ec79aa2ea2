/**
 * What the companion clients (a command-line/voice client, a tablet app) read beyond chat, with the
 * fields they read: the admin aliases (a task, a page of channels, the tool list, a tool's error), a
 * new key's `full_key`, the approvals scopes, the bots' models, and a 404 for an unknown bot on the
 * routes that take one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, type TestServer } from "../support/server.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "./harness.ts"

describe.each(backends)("the companion clients' admin surface (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "Done.")
    server = started.server
    llm = started.llm
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })
  const post = (path: string, body: unknown, auth?: string) =>
    server.request(path, { method: "POST", body: JSON.stringify(body), ...(auth ? { auth } : {}) })
  const newKey = async (scopes: Array<string>) => json(await post("/api/v1/admin/api-keys", { name: `key ${scopes.join(" ")}`, scopes }))

  it("serves a task under the admin prefix with the same body", async () => {
    const { session_id } = await json(await post("/chat", { message: "hello", client_id: "compat-tasks" }))
    const injected = await json(await post(`/api/v1/sessions/${session_id}/messages`, { content: "again", run_agent: true }))
    // Compared once finished, so both reads see the same task.
    const plain = await waitFor(async () => {
      const task = await json(await server.request(`/api/v1/tasks/${injected.task_id}`))
      return task.status === "complete" && task.delivery_status !== "pending" ? task : undefined
    }, "the task finished")
    const admin = await server.request(`/api/v1/admin/tasks/${injected.task_id}`)
    expect(admin.status).toBe(200)
    expect(await json(admin)).toEqual(plain)
    expect((await server.request("/api/v1/admin/tasks/00000000-0000-4000-8000-000000000000")).status).toBe(404)
  })

  it("pages channels with their total, optionally a bot's", async () => {
    for (const n of [1, 2, 3]) expect((await post("/api/v1/admin/channels", { name: `paged ${n}`, bot_id: "default" })).status).toBe(201)
    const first = await json(await server.request("/api/v1/admin/channels?page=1&page_size=2&bot_id=default"))
    expect(first).toMatchObject({ page: 1, page_size: 2 })
    expect(first.total).toBeGreaterThanOrEqual(3)
    expect(first.channels).toHaveLength(2)
    const second = await json(await server.request("/api/v1/admin/channels?page=2&page_size=2&bot_id=default"))
    expect(second.channels[0].id).not.toBe(first.channels[0].id)
    expect(second.total).toBe(first.total)
    expect(await json(await server.request("/api/v1/admin/channels?bot_id=nobody"))).toEqual({
      channels: [],
      total: 0,
      page: 1,
      page_size: 50
    })
    expect((await server.request("/api/v1/admin/channels?page=0")).status).toBe(422)
  })

  it("lists tools as tool_name, description, parameters, source_integration, and says a tool's error", async () => {
    const tools = await json(await server.request("/api/v1/admin/tools"))
    expect(Array.isArray(tools)).toBe(true)
    const time = tools.find((t: any) => t.tool_name === "current_time")
    expect(time).toMatchObject({
      tool_name: "current_time",
      description: expect.any(String),
      parameters: expect.any(Object),
      source_integration: null
    })
    expect(tools.find((t: any) => t.source_integration === "mailbox")).toMatchObject({ tool_name: expect.any(String) })
    const failing = await json(await post("/api/v1/admin/tools/query_feed_store/execute", { arguments: { action: "stats" } }))
    const ok = await json(await post("/api/v1/admin/tools/current_time/execute", { arguments: {} }))
    expect(ok).toMatchObject({ is_error: false, error: null })
    // The mailbox tools need the integration's settings: without them the call fails, and says why.
    if (failing.is_error) expect(failing.error).toEqual(expect.any(String))
    else expect(failing.error).toBeNull()
  })

  it("returns a new key as key and full_key, and the key works", async () => {
    const created = await newKey(["bots:read"])
    expect(created.full_key).toBe(created.key)
    expect((await server.request("/bots", { auth: created.full_key })).status).toBe(200)
    expect(JSON.stringify(await json(await server.request("/api/v1/admin/api-keys")))).not.toContain(created.key)
  })

  it("has approvals scopes: deciding needs approvals:write, which chat also grants", async () => {
    const catalogue = JSON.stringify(await json(await server.request("/api/v1/scopes")))
    expect(catalogue).toContain("approvals:read")
    expect(catalogue).toContain("approvals:write")
    const decide = (key: string) => post("/api/v1/approvals/00000000-0000-4000-8000-000000000000/decide", { approved: true }, key)
    // Past the scope check an unknown approval is a 404; without the scope, 403.
    expect((await decide((await newKey(["approvals:write"])).key)).status).toBe(404)
    expect((await decide((await newKey(["chat"])).key)).status).toBe(404)
    const refused = await decide((await newKey(["approvals:read"])).key)
    expect(refused.status).toBe(403)
    expect(await json(refused)).toEqual({ detail: "Missing required scope: approvals:write" })
  })

  it("lists bots with the model each runs on", async () => {
    const bots = await json(await server.request("/bots"))
    expect(bots.find((b: any) => b.id === "default")).toMatchObject({ model: expect.any(String) })
    expect(bots.every((b: any) => typeof b.model === "string" && b.model.length > 0)).toBe(true)
  })

  it("answers 404 Unknown bot on chat, stream and session creation", async () => {
    for (const path of ["/chat", "/chat/stream"]) {
      const response = await post(path, { message: "hi", client_id: "compat-unknown", bot_id: "no-such-bot" })
      expect(response.status, path).toBe(404)
      expect(await json(response)).toEqual({ detail: "Unknown bot: no-such-bot" })
    }
    const session = await post("/api/v1/sessions", { client_id: "compat-unknown", bot_id: "no-such-bot" })
    expect(session.status).toBe(404)
    expect(await json(session)).toEqual({ detail: "Unknown bot: no-such-bot" })
  })
})
