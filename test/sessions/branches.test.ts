/**
 * A conversation's own settings, branches and transfer (migration 0086), through the typed client
 * on both databases: the model, instructions and temperature stored with the session reach the
 * model call; a branch at a message keeps both conversations reachable; an export carries the tool
 * calls and an import stores it again; a user's own sessions are listed whatever surface made them;
 * a heartbeat's instruction does not title its conversation.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { ChatRequest } from "../../src/intake/Model.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { until } from "../support/time.ts"

const chatRequest = withDefaults(ChatRequest)

describe.each(backends)("conversation settings, branches, export and import (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: fakeLlmEnv(llm) })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  const say = (sessionId: string, message: string, extra: Partial<typeof ChatRequest.Type> = {}) =>
    server.call((client) =>
      client.chat.chat({ payload: chatRequest({ message, session_id: sessionId, client_id: "web:branches", ...extra }) })
    )
  const completions = () => llm.requestsTo("/v1/chat/completions").map((request) => request.body)
  const messagesOf = (id: string) => server.call((client) => client.sessions.messages({ path: { id } }))

  it("runs a conversation with its own model, instructions and temperature, and clears them back to the bot's", async () => {
    const id = crypto.randomUUID()
    llm.script({ text: "First." }, { text: "Second." }, { text: "Third." })
    await say(id, "hello")
    const updated = await server.call((client) =>
      client.sessions.update({
        path: { id },
        payload: { model: "fake-other", system_prompt: "Answer like a pirate.", temperature: 0.3 }
      })
    )
    expect(updated).toMatchObject({ model: "fake-other", system_prompt: "Answer like a pirate.", temperature: 0.3 })
    await say(id, "again")
    const [, configured] = completions()
    expect(configured.model).toBe("fake-other")
    expect(configured.temperature).toBe(0.3)
    expect(configured.messages[0].content).toContain("Answer like a pirate.")
    // A request's own model still wins; cleared settings are the bot's again.
    await server.call((client) =>
      client.sessions.update({ path: { id }, payload: { model: null, system_prompt: null, temperature: null } })
    )
    await say(id, "plain")
    const plain = completions()[2]
    expect(plain.model).not.toBe("fake-other")
    expect(JSON.stringify(plain.messages[0] ?? {})).not.toContain("pirate")
    const refused = await server.request(`/api/v1/sessions/${id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ temperature: 7 })
    })
    expect(refused.status).toBe(422)
  })

  it("branches a conversation at a message: the branch holds what came before, both stay reachable", async () => {
    const id = crypto.randomUUID()
    llm.script({ text: "Paris." }, { text: "Rome." }, { text: "Madrid." })
    await say(id, "Capital of France?")
    await say(id, "Capital of Italy?")
    const original = await messagesOf(id)
    const second = original.filter((message) => message.role === "user")[1]!
    const branch = await server.call((client) => client.sessions.fork({ path: { id }, payload: { message_id: second.id } }))
    expect(branch).toMatchObject({ forked_from: id, fork_point: 2, title: "Capital of France?" })
    expect((await messagesOf(branch.id)).map((message) => message.content)).toEqual(["Capital of France?", "Paris."])
    // Edited and sent again on the branch; the original keeps its own answer.
    await say(branch.id, "Capital of Spain?")
    expect((await messagesOf(branch.id)).map((message) => message.content)).toEqual([
      "Capital of France?",
      "Paris.",
      "Capital of Spain?",
      "Madrid."
    ])
    expect((await messagesOf(id)).at(-1)!.content).toBe("Rome.")
    // The model saw the branch's history only.
    expect(JSON.stringify(completions()[2].messages)).not.toContain("Italy")

    const { branches } = await server.call((client) => client.sessions.family({ path: { id: branch.id } }))
    expect(branches.map((found) => [found.id, found.forked_from, found.fork_point])).toEqual([[id, null, null], [branch.id, id, 2]])
    // The list shows the conversation once; its branches are reached through it.
    const listed = await server.call((client) => client.sessions.legacyList({ urlParams: { client_id: "web:branches" } }))
    expect(listed.map((session) => session.id)).toContain(id)
    expect(listed.map((session) => session.id)).not.toContain(branch.id)

    const elsewhere = await server.request(`/api/v1/sessions/${id}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message_id: crypto.randomUUID() })
    })
    expect(elsewhere.status).toBe(422)
    expect(JSON.stringify(await elsewhere.json())).toContain("not one of the conversation's")
  })

  it("exports a conversation with its tool calls and imports it as a new one", async () => {
    const id = crypto.randomUUID()
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "It is now." })
    await server.call((client) => client.bots.update({ path: { id: "default" }, payload: { tools: ["current_time"] } }))
    await say(id, "What time is it?")
    const exported = await server.call((client) => client.sessions.export({ path: { id } }))
    expect(exported.format).toBe("cairn.session/1")
    expect(exported.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect(exported.messages[1]!.tool_calls![0]!.function.name).toBe("current_time")

    const imported = await server.call((client) =>
      client.sessions.import({ payload: { bot_id: "default", client_id: "web:branches", export: exported } })
    )
    expect(imported.id).not.toBe(id)
    expect(imported.title).toBe("What time is it?")
    const copied = await messagesOf(imported.id)
    expect(copied.map((message) => [message.role, message.content])).toEqual(
      exported.messages.map((message) => [message.role, message.content])
    )
    expect(copied[2]!.tool_call_id).toBe(exported.messages[2]!.tool_call_id)
    expect(copied[0]!.metadata).not.toHaveProperty("run_id")
  })

  it("lists a caller's own sessions from any surface, and titles a conversation an instruction started from its first answer", async () => {
    const cli = crypto.randomUUID()
    llm.script({ text: "From the terminal." }, { text: "Nothing new today." })
    await say(cli, "typed in a terminal", { client_id: "cli" })
    const mine = await server.call((client) => client.sessions.legacyList({ urlParams: { mine: true } }))
    expect(mine.map((session) => session.id)).toContain(cli)

    const { session_id } = await server.call((client) => client.sessions.create({ payload: { client_id: "heartbeat-like" } }))
    await server.call((client) =>
      client.injection.inject({
        path: { id: session_id },
        payload: { content: "Check the inbox and report.", source: "heartbeat", run_agent: true, notify: false }
      })
    )
    const titled = await until(
      () => server.call((client) => client.sessions.legacyGet({ path: { id: session_id } })),
      (session) => session.messages.length >= 2,
      20_000,
      "the heartbeat's answer"
    )
    expect(titled.title).toBe("Nothing new today.")
  })
})
