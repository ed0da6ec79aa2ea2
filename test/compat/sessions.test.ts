/**
 * Sessions as the companion clients use them: a session id the client chose wins over a channel id,
 * naming another bot with an existing session id moves the session to it ("switch bot", history
 * kept), and a session's history never has `content: null` (a tool-call message has "").
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "./harness.ts"

describe.each(backends)("companion-client sessions (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "Hello.")
    server = started.server
    llm = started.llm
    const bot = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "poet", name: "Poet", system_prompt: "You write verse.", tools: ["current_time"] })
    })
    expect(bot.status).toBe(201)
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })
  const chat = async (body: Record<string, unknown>) => {
    const response = await server.request("/chat", { method: "POST", body: JSON.stringify(body) })
    expect(response.status).toBe(200)
    return json(response)
  }
  const session = async (id: string) => json(await server.request(`/sessions/${id}`))

  it("lets a session id win over a channel id", async () => {
    const channel = await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "elsewhere", bot_id: "default" }) })
    )
    const chosen = crypto.randomUUID()
    const answer = await chat({ message: "hi", client_id: "compat-sessions", session_id: chosen, channel_id: channel.id })
    expect(answer.session_id).toBe(chosen)
    expect((await json(await server.request(`/api/v1/channels/${channel.id}`))).active_session_id).toBeNull()
  })

  it("moves a session to another bot when a request names it, keeping the history", async () => {
    const id = crypto.randomUUID()
    await chat({ message: "first, to the default bot", client_id: "compat-switch", session_id: id })
    expect((await session(id)).bot_id).toBe("default")
    await chat({ message: "now to the poet", client_id: "compat-switch", session_id: id, bot_id: "poet" })
    const moved = await session(id)
    expect(moved.bot_id).toBe("poet")
    expect(moved.messages.filter((m: any) => m.role === "user").map((m: any) => m.content)).toEqual([
      "first, to the default bot",
      "now to the poet"
    ])
    // The poet's own system prompt drove the second turn.
    const last = llm.requestsTo("/v1/chat/completions").at(-1)!.body as any
    expect(JSON.stringify(last.messages[0])).toContain("You write verse.")
    // Without a bot_id the session stays where it is.
    await chat({ message: "and again", client_id: "compat-switch", session_id: id })
    expect((await session(id)).bot_id).toBe("poet")
    const unknown = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "x", session_id: id, bot_id: "nobody" })
    })
    expect(unknown.status).toBe(404)
    expect((await session(id)).bot_id).toBe("poet")
  })

  it("never returns content null: a tool-call message has an empty string", async () => {
    const id = crypto.randomUUID()
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "It is late." })
    await chat({ message: "what time is it?", client_id: "compat-history", session_id: id, bot_id: "poet" })
    const { messages } = await session(id)
    const call = messages.find((m: any) => m.role === "assistant" && m.tool_calls?.length)
    expect(call).toBeDefined()
    expect(call.content).toBe("")
    expect(messages.every((m: any) => typeof m.content === "string")).toBe(true)
    const listed = await json(await server.request(`/api/v1/sessions/${id}/messages`))
    expect(listed.every((m: any) => typeof m.content === "string")).toBe(true)
  })

  it("lists sessions with a title from the first message, editable, and when each was last active", async () => {
    const id = crypto.randomUUID()
    const long = "Plan a three day walking trip through the Lake District in early spring, with pubs on the way and a rest day"
    await chat({ message: long, client_id: "compat-titles", session_id: id })
    const listed = (await json(await server.request("/sessions?client_id=compat-titles"))).find((s: any) => s.id === id)
    expect(listed.title.endsWith("…")).toBe(true)
    expect(listed.title.length).toBeLessThanOrEqual(81)
    expect(long.startsWith(listed.title.slice(0, -1))).toBe(true)
    expect(Date.parse(listed.last_active)).toBeGreaterThanOrEqual(Date.parse(listed.created_at))
    const before = Date.parse(listed.last_active)

    // The second message neither renames the session nor leaves last_active behind.
    await new Promise((resolve) => setTimeout(resolve, 20))
    await chat({ message: "and a fourth day?", client_id: "compat-titles", session_id: id })
    const again = await session(id)
    expect(again.title).toBe(listed.title)
    expect(Date.parse(again.last_active)).toBeGreaterThan(before)

    const renamed = await server.request(`/sessions/${id}`, { method: "PATCH", body: JSON.stringify({ title: "Lake District trip" }) })
    expect(renamed.status).toBe(200)
    expect(await json(renamed)).toMatchObject({ id, title: "Lake District trip" })
    await chat({ message: "one more", client_id: "compat-titles", session_id: id })
    expect((await session(id)).title).toBe("Lake District trip")
    expect((await server.request(`/sessions/${id}`, { method: "PATCH", body: JSON.stringify({ title: "  " }) })).status).toBe(422)
    expect((await server.request(`/sessions/${crypto.randomUUID()}`, { method: "PATCH", body: JSON.stringify({ title: "x" }) })).status)
      .toBe(404)
    // Most recently active first.
    const other = crypto.randomUUID()
    await chat({ message: "short one", client_id: "compat-titles", session_id: other })
    const order = (await json(await server.request("/sessions?client_id=compat-titles"))).map((s: any) => s.id)
    expect(order.indexOf(other)).toBeLessThan(order.indexOf(id))
    expect((await session(other)).title).toBe("short one")
  })

  it("summarizes a session: answers {title, summary}, and later turns send the summary instead of the messages it covers", async () => {
    const id = crypto.randomUUID()
    await chat({ message: "My cat is called Biscuit and she is nine.", client_id: "compat-summary", session_id: id })
    await chat({ message: "She likes tuna.", client_id: "compat-summary", session_id: id })
    llm.script({
      text: JSON.stringify({ title: "Biscuit the cat", summary: "The user has a nine-year-old cat, Biscuit, who likes tuna." })
    })
    const response = await server.request(`/sessions/${id}/summarize`, { method: "POST" })
    expect(response.status).toBe(200)
    expect(await json(response)).toEqual({
      title: "Biscuit the cat",
      summary: "The user has a nine-year-old cat, Biscuit, who likes tuna."
    })
    const asked = llm.requestsTo("/v1/chat/completions").at(-1)!.body as any
    expect(asked).toMatchObject({ temperature: 0, response_format: { type: "json_object" } })
    expect(asked.messages[1].content).toContain("User: She likes tuna.")

    await chat({ message: "What should I feed her?", client_id: "compat-summary", session_id: id })
    const next = llm.requestsTo("/v1/chat/completions").at(-1)!.body as any
    const sent = JSON.stringify(next.messages)
    expect(sent).toContain("Summary of the conversation so far:\\nThe user has a nine-year-old cat")
    expect(sent).not.toContain("She likes tuna.")
    expect(next.messages.at(-1)).toMatchObject({ role: "user", content: "What should I feed her?" })
    // The history itself is all still there.
    expect((await session(id)).messages.filter((m: any) => m.role === "user")).toHaveLength(3)

    // No JSON even when asked again: the answer is the summary, titled "Conversation" (docs/api.md,
    // "Models that misbehave"); only an answer with nothing in it is the provider's failure.
    llm.script({ text: "not json at all" }, { text: "still not json" })
    expect(await json(await server.request(`/sessions/${id}/summarize`, { method: "POST" }))).toEqual({
      title: "Conversation",
      summary: "still not json"
    })
    llm.script({ text: "" }, { text: "" })
    expect((await server.request(`/sessions/${id}/summarize`, { method: "POST" })).status).toBe(502)
    expect((await server.request(`/sessions/${crypto.randomUUID()}/summarize`, { method: "POST" })).status).toBe(404)
  })
})
