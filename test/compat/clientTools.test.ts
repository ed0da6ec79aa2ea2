/**
 * Client tools and client actions as the companion clients use them: a bot names the built-in
 * `shell_exec` client tool without writing its schema (the model sees the schema, the client gets a
 * tool_request), and the built-in `client_action` tool puts an action the client understands into
 * the response's client_actions, blocking and streaming.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "./harness.ts"

describe.each(backends)("client tools and client actions (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "Done.")
    server = started.server
    llm = started.llm
    const bot = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "helper", name: "Helper", tools: ["client_action"], client_tools: ["shell_exec"] })
    })
    expect(bot.status).toBe(201)
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })

  it("expands a built-in client tool named by a bot, and refuses an unknown name", async () => {
    const bot = await json(await server.request("/api/v1/admin/bots/helper"))
    expect(bot.client_tools).toEqual([
      expect.objectContaining({ name: "shell_exec", parameters: expect.objectContaining({ required: ["command"] }) })
    ])
    const unknown = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "broken", name: "Broken", client_tools: ["rm_rf"] })
    })
    expect(unknown.status).toBe(422)
    expect(JSON.stringify(await json(unknown))).toContain("Unknown built-in client tool: rm_rf")
  })

  it("asks the client to run shell_exec through a tool_request", async () => {
    llm.script({ toolCalls: [{ name: "shell_exec", arguments: JSON.stringify({ command: "uptime", timeout: 5 }) }] }, {
      text: "Up for a day."
    })
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({ message: "how long has my machine been up?", bot_id: "helper", client_id: "compat-tools" }),
      signal: controller.signal
    })
    const sse = readSse(response, controller)
    const events = await sse.until((e) => e.data.type === "tool_request")
    const request = events.at(-1)!.data
    expect(request).toMatchObject({ tool: "shell_exec", name: "shell_exec", arguments: { command: "uptime", timeout: 5 } })
    const offered = (llm.requestsTo("/v1/chat/completions").at(-1)!.body as any).tools.map((t: any) => t.function.name)
    expect(offered).toEqual(expect.arrayContaining(["shell_exec", "client_action"]))
    await server.request("/chat/tool_result", {
      method: "POST",
      body: JSON.stringify({ request_id: request.request_id, result: "up 1 day" })
    })
    expect((await sse.rest()).at(-1)!.data).toMatchObject({ type: "response", text: "Up for a day." })
  })

  it("delivers a client_action in the blocking response and in the stream's response event", async () => {
    llm.script({ toolCalls: [{ name: "client_action", arguments: JSON.stringify({ action: "new_session" }) }] }, {
      text: "Starting afresh."
    })
    const blocking = await json(
      await server.request("/chat", {
        method: "POST",
        body: JSON.stringify({ message: "start over", bot_id: "helper", client_id: "compat-actions" })
      })
    )
    expect(blocking).toMatchObject({ response: "Starting afresh.", client_actions: [{ action: "new_session" }] })

    llm.script({ toolCalls: [{ name: "client_action", arguments: JSON.stringify({ action: "switch_bot", bot_id: "default" }) }] }, {
      text: "Switching."
    })
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({ message: "let me talk to the default bot", bot_id: "helper", client_id: "compat-actions-2" }),
      signal: controller.signal
    })
    const events = await readSse(response, controller).rest()
    expect(events.at(-1)!.data).toMatchObject({ type: "response", client_actions: [{ action: "switch_bot", bot_id: "default" }] })

    // An action clients do not know is an error the model sees, not an action.
    llm.script({ toolCalls: [{ name: "client_action", arguments: JSON.stringify({ action: "format_disk" }) }] }, { text: "I cannot." })
    const refused = await json(
      await server.request("/chat", {
        method: "POST",
        body: JSON.stringify({ message: "wipe it", bot_id: "helper", client_id: "compat-actions-3" })
      })
    )
    expect(refused.client_actions).toEqual([])
    const toolMessage = (llm.requestsTo("/v1/chat/completions").at(-1)!.body as any).messages.find((m: any) => m.role === "tool")
    expect(toolMessage.content).toContain("action: must be one of new_session")
  })
})
