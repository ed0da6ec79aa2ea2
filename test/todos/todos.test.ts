/**
 * `/api/v1/todos` through the typed client: the lifecycle (create, read, filter, update, complete,
 * reopen, delete), bad input refused, the scopes, and one table with the bots' `todos` tool.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ValidationError } from "../../src/contract/Errors.ts"
import { NotFound } from "../../src/contract/Errors.ts"
import { CreateTodo, UpdateTodo } from "../../src/todos/Model.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("todos (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let channelId: string

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Done." } })
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-todos", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    })
    expect(
      (await server.request("/api/v1/admin/bots", {
        method: "POST",
        body: JSON.stringify({ id: "planner", name: "Planner", tools: ["@todos"] })
      })).status
    ).toBe(201)
    channelId = (await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "kitchen", bot_id: "planner" }) })
    )).id
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("creates, reads, filters, updates, completes, reopens and deletes a todo", async () => {
    const created = await server.call((c) =>
      c.todos.create({
        payload: new CreateTodo({
          title: "Descale the kettle",
          notes: "vinegar",
          due_at: new Date("2026-12-01T09:00:00Z"),
          bot_id: "planner",
          channel_id: channelId
        })
      })
    )
    expect(created).toMatchObject({
      title: "Descale the kettle",
      notes: "vinegar",
      status: "open",
      bot_id: "planner",
      channel_id: channelId,
      created_by: "static",
      completed_at: null
    })
    expect(created.due_at?.toISOString()).toBe("2026-12-01T09:00:00.000Z")
    expect(await server.call((c) => c.todos.get({ path: { id: created.id } }))).toEqual(created)

    const other = await server.call((c) => c.todos.create({ payload: new CreateTodo({ title: "Water the basil" }) }))
    expect(other).toMatchObject({ bot_id: "default", channel_id: null, due_at: null, notes: "" })
    const byChannel = await server.call((c) => c.todos.list({ urlParams: { channel_id: channelId } }))
    expect(byChannel.map((t) => t.id)).toEqual([created.id])
    expect((await server.call((c) => c.todos.list({ urlParams: { bot_id: "default" } }))).map((t) => t.id)).toContain(other.id)

    const renamed = await server.call((c) =>
      c.todos.update({ path: { id: created.id }, payload: new UpdateTodo({ title: "Descale the kettle and the iron", due_at: null }) })
    )
    expect(renamed).toMatchObject({ title: "Descale the kettle and the iron", due_at: null, notes: "vinegar" })
    const done = await server.call((c) => c.todos.complete({ path: { id: created.id } }))
    expect(done.status).toBe("done")
    expect(done.completed_at).not.toBeNull()
    expect((await server.call((c) => c.todos.complete({ path: { id: created.id } }))).completed_at).toEqual(done.completed_at)
    expect(await server.call((c) => c.todos.list({ urlParams: { channel_id: channelId, status: "open" } }))).toEqual([])
    const reopened = await server.call((c) => c.todos.update({ path: { id: created.id }, payload: new UpdateTodo({ status: "open" }) }))
    expect(reopened).toMatchObject({ status: "open", completed_at: null })

    await server.call((c) => c.todos.delete({ path: { id: created.id } }))
    const gone = await server.failsWith(NotFound, (c) => c.todos.get({ path: { id: created.id } }))
    expect(gone.detail).toBe(`Todo not found: ${created.id}`)
  })

  it("refuses bad input and changes nothing", async () => {
    const before = (await server.call((c) => c.todos.list({ urlParams: {} }))).length
    for (const body of [{ title: "" }, { title: "  padded  " }, { title: "x", due_at: "someday" }, { title: "x", status: "open" }, {}]) {
      const response = await server.request("/api/v1/todos", { method: "POST", body: JSON.stringify(body) })
      expect(response.status, JSON.stringify(body)).toBe(422)
    }
    expect((await server.request("/api/v1/todos", { method: "POST", body: JSON.stringify({ title: "x", bot_id: "ghost" }) })).status).toBe(
      404
    )
    const badChannel = await server.failsWith(
      ValidationError,
      (c) => c.todos.create({ payload: new CreateTodo({ title: "x", channel_id: "00000000-0000-4000-8000-000000000000" }) })
    )
    expect(badChannel.detail[0]!.loc).toEqual(["body", "channel_id"])
    expect((await server.request("/api/v1/todos/not-a-uuid")).status).toBe(404)
    expect(
      (await server.request("/api/v1/todos/00000000-0000-4000-8000-000000000000", {
        method: "PATCH",
        body: JSON.stringify({ title: "y" })
      })).status
    ).toBe(404)
    expect((await server.call((c) => c.todos.list({ urlParams: {} }))).length).toBe(before)
  })

  it("reads with todos:read, writes only with todos:write, and records who made a todo", async () => {
    const reader = await createKey(server, ["todos:read"])
    const writer = await createKey(server, ["todos:write", "todos:read"])
    expect((await server.request("/api/v1/todos", { auth: reader.key })).status).toBe(200)
    expect((await server.request("/api/v1/todos", { method: "POST", body: JSON.stringify({ title: "nope" }), auth: reader.key })).status)
      .toBe(403)
    const made = await server.as(writer.key).call((c) => c.todos.create({ payload: new CreateTodo({ title: "Buy candles" }) }))
    expect(made.created_by).toBe(`scoped_key:${writer.id}`)
  })

  it("shares one table with the bots' todos tool", async () => {
    llm.script({ toolCalls: [{ name: "todos", arguments: JSON.stringify({ action: "create", title: "Order more flour" }) }] }, {
      text: "Added."
    })
    expect(
      (await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "remind me about flour", channel_id: channelId }) }))
        .status
    ).toBe(200)
    const listed = await server.call((c) => c.todos.list({ urlParams: { bot_id: "planner", status: "open" } }))
    const flour = listed.find((t) => t.title === "Order more flour")
    expect(flour).toMatchObject({ created_by: "bot:planner", channel_id: channelId })
    expect(flour!.session_id).not.toBeNull()
    // Completed over HTTP, the bot sees it done.
    await server.call((c) => c.todos.complete({ path: { id: flour!.id } }))
    llm.script({ toolCalls: [{ name: "todos", arguments: JSON.stringify({ action: "list", status: "done" }) }] }, { text: "Listed." })
    await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "what is done?", channel_id: channelId }) })
    expect(llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages.at(-1).content).toContain(`${flour!.id} [done] Order more flour`)
  })
})
