/**
 * The mission_control integration: the dashboard reflects a run in progress, a todo and a heartbeat;
 * todos through its routes and through its carapace's tool in a turn; the workspace file proxy
 * writes under the workspace path rules (traversal refused); the mailbox-feeds carapace includes
 * it; and a key of the "Mission Control" preset does all this and nothing more.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { presets } from "../../src/auth/Scopes.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"

describe.each(backends)("mission control (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let key: string
  let channelId: string
  const mc = (path: string, init: RequestInit = {}) => server.request(`/integrations/mission_control${path}`, { ...init, auth: key })

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Noted." } })
    server = await startServer({ backend, env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-mc", DEFAULT_MODEL: "fake-model" } })
    key = (await createKey(server, [...presets.find((p) => p.id === "mission_control")!.scopes], { name: "mission control" })).key
    channelId = (await json(
      await server.request("/api/v1/admin/channels", {
        method: "POST",
        body: JSON.stringify({ name: "ops", bot_id: "default", workspace_enabled: true })
      })
    )).id
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("shows a run in progress, an open todo, a heartbeat and the integrations on the dashboard", async () => {
    const todo = await mc("/todos", { method: "POST", body: JSON.stringify({ title: "Renew the harbour permit", channel_id: channelId }) })
    expect(todo.status).toBe(201)
    const made = await json(todo)
    expect(made).toMatchObject({
      title: "Renew the harbour permit",
      status: "open",
      bot_id: "default",
      created_by: "integration:mission_control"
    })
    expect(
      (await server.request(`/api/v1/channels/${channelId}/heartbeat`, {
        method: "PUT",
        body: JSON.stringify({ prompt: "Status?", interval_seconds: 3600 })
      })).status
    ).toBe(200)
    llm.script({ text: "a b c d e f g h", chunkDelayMs: 300 })
    const stream = readSse(
      await server.request("/chat/stream", { method: "POST", body: JSON.stringify({ message: "Work slowly", channel_id: channelId }) })
    )
    await stream.until((event) => event.data.type === "assistant_text")
    const dashboard = await json(await mc("/dashboard"))
    expect(dashboard.active_runs.map((run: { channel_id: string }) => run.channel_id)).toContain(channelId)
    expect(dashboard.todos.map((t: { id: string }) => t.id)).toContain(made.id)
    expect(dashboard.heartbeats.map((h: { channel_id: string }) => h.channel_id)).toContain(channelId)
    expect(dashboard.channels.find((c: { id: string }) => c.id === channelId).last_activity_at).not.toBeNull()
    expect(dashboard.integrations.map((i: { id: string }) => i.id)).toEqual(expect.arrayContaining(["mission_control", "mailbox"]))
    expect(dashboard.tasks).toMatchObject({ queued: expect.any(Number), running: expect.any(Number), failed: expect.any(Array) })
    await stream.rest()
    // The run's row is closed just after its stream ends.
    await expect.poll(async () => (await json(await mc("/dashboard"))).active_runs.map((run: { channel_id: string }) => run.channel_id)).not
      .toContain(channelId)
    const done = await mc(`/todos/${made.id}/complete`, { method: "POST" })
    expect((await json(done)).status).toBe("done")
    expect((await json(await mc("/dashboard"))).todos.map((t: { id: string }) => t.id)).not.toContain(made.id)
  })

  it("writes workspace files for external processes under the workspace path rules", async () => {
    const put = await mc(`/channels/${channelId}/workspace/files/content?path=data/inbox/note.md`, {
      method: "PUT",
      body: JSON.stringify({ content: "# From outside" })
    })
    expect(put.status).toBe(200)
    expect(await json(put)).toEqual({ path: "data/inbox/note.md", size: 14 })
    expect((await json(await server.request(`/api/v1/channels/${channelId}/workspace/files/data/inbox/note.md`, { auth: key }))).content)
      .toBe("# From outside")
    const read = await mc(`/channels/${channelId}/workspace/files/content?path=data/inbox/note.md`)
    expect((await json(read)).content).toBe("# From outside")
    for (const path of ["../../etc/passwd", "/etc/passwd", "data/../../outside.md"]) {
      const refused = await mc(`/channels/${channelId}/workspace/files/content?path=${encodeURIComponent(path)}`, {
        method: "PUT",
        body: JSON.stringify({ content: "x" })
      })
      expect(refused.status).toBe(422)
    }
    expect(
      (await mc(`/channels/${crypto.randomUUID()}/workspace/files/content?path=a.md`, {
        method: "PUT",
        body: JSON.stringify({ content: "x" })
      })).status
    ).toBe(404)
    expect((await mc(`/channels/${channelId}/workspace/files/content`, { method: "PUT", body: JSON.stringify({ content: "x" }) })).status)
      .toBe(422)
  })

  it("gives a bot the dashboard and todos through the mission-control carapace, which mailbox-feeds includes", async () => {
    const feeds = await json(await server.request("/api/v1/carapaces/mailbox-feeds/resolved"))
    expect(feeds.tools).toEqual(expect.arrayContaining(["mission_control_dashboard", "mission_control_todos", "query_feed_store"]))
    expect(
      (await server.request("/api/v1/admin/bots", {
        method: "POST",
        body: JSON.stringify({ id: "controller", name: "Controller", carapaces: ["mission-control"] })
      })).status
    ).toBe(201)
    llm.script({
      toolCalls: [{ name: "mission_control_todos", arguments: JSON.stringify({ action: "add", title: "Call the pilot station" }) }]
    }, { text: "Added." })
    expect(
      (await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "Add a todo", bot_id: "controller" }) })).status
    ).toBe(200)
    const todos = await json(await server.request("/api/v1/todos?bot_id=controller"))
    expect(todos.map((t: { title: string }) => t.title)).toContain("Call the pilot station")
    llm.script({ toolCalls: [{ name: "mission_control_dashboard", arguments: "{}" }] }, { text: "Seen." })
    await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "How are things?", bot_id: "controller" }) })
    const toolMessage = llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages.at(-1)
    expect(JSON.parse(toolMessage.content).todos.map((t: { title: string }) => t.title)).toContain("Call the pilot station")
  })

  it("lets the Mission Control preset do what the dashboard needs and nothing more", async () => {
    for (
      const [path, init] of [
        ["/integrations/mission_control/dashboard", {}],
        ["/api/v1/todos", {}],
        ["/api/v1/tasks", {}],
        [`/api/v1/channels/${channelId}/workspace/files`, {}],
        ["/api/v1/admin/logs", {}]
      ] as const
    ) {
      expect((await server.request(path, { ...init, auth: key })).status).toBe(200)
    }
    for (
      const [path, init] of [
        ["/api/v1/admin/settings", {}],
        ["/api/v1/admin/api-keys", {}],
        ["/chat", { method: "POST", body: JSON.stringify({ message: "hi" }) }],
        [`/api/v1/channels/${channelId}/heartbeat`, { method: "PUT", body: JSON.stringify({ prompt: "x", interval_seconds: 60 }) }],
        ["/api/v1/documents/search?q=x", {}],
        ["/api/v1/admin/operations/backup/history", {}]
      ] as const
    ) {
      expect((await server.request(path, { ...init, auth: key })).status).toBe(403)
    }
    // The file proxy reaches every channel's files: it takes the workspace's scope, not mission control's alone.
    const controlOnly = await createKey(server, ["mission_control:read", "mission_control:write"], { name: "control only" })
    expect(
      (await server.request(`/integrations/mission_control/channels/${channelId}/workspace/files/content?path=a.md`, {
        method: "PUT",
        body: JSON.stringify({ content: "x" }),
        auth: controlOnly.key
      })).status
    ).toBe(403)
    expect((await server.request(`/integrations/mission_control/dashboard`, { auth: controlOnly.key })).status).toBe(200)
    expect((await server.request(`/integrations/mission_control/todos?channel_id=not-a-uuid`, { auth: key })).status).toBe(422)
  })
})
