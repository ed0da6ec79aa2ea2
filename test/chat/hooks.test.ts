/**
 * Lifecycle hooks fired by real agent runs: each event with its extra keys and the hook context, a
 * throwing hook that does not break the run, and the webhook payload at a loopback receiver.
 */
import { Effect } from "effect"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { foreignTool } from "../../src/agent/Tool.ts"
import { ToolRegistry } from "../../src/agent/Tools.ts"
import { Hooks } from "../../src/hooks/Hooks.ts"
import type { HookEvent } from "../../src/hooks/Model.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

describe("lifecycle hooks in agent runs", () => {
  let llm: FakeLlm
  let server: TestServer
  let receiver: http.Server
  const posted: Array<any> = []
  const seen: Array<{ event: HookEvent; context: any }> = []

  beforeAll(async () => {
    receiver = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        posted.push({ contentType: request.headers["content-type"], body: JSON.parse(body) })
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const { port } = receiver.address() as { port: number }
    llm = await startFakeLlm()
    server = await startServer({
      backend: "pglite",
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-hooks",
        DEFAULT_MODEL: "fake-model",
        HOOK_WEBHOOK_URLS: `http://127.0.0.1:${port}/hooks`
      }
    })
    await server.run(
      Effect.gen(function*() {
        const hooks = yield* Hooks
        const events: ReadonlyArray<HookEvent> = [
          "before_context_assembly",
          "before_llm_call",
          "after_llm_call",
          "before_tool_execution",
          "after_tool_call",
          "after_response"
        ]
        // A hook that throws on every event comes first: the run and the other hooks must not care.
        for (const event of events) {
          hooks.registerHook(event, () => {
            throw new Error("hook failure on purpose")
          })
        }
        for (const event of events.slice(0, 3)) hooks.registerHook(event, (context: unknown) => void seen.push({ event, context }))
        // Async callbacks are accepted too.
        for (const event of events.slice(3)) {
          hooks.registerHook(event, async (context: unknown) => {
            await new Promise((resolve) => setTimeout(resolve, 5))
            seen.push({ event, context })
          })
        }
        const tools = yield* ToolRegistry
        yield* tools.register(foreignTool({
          name: "echo",
          description: "Echoes",
          parameters: { type: "object", properties: {} },
          source: "test",
          execute: (args) => JSON.stringify(args)
        }))
      })
    )
    const bot = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "hookbot", name: "Hook Bot", tools: ["echo"] })
    })
    expect(bot.status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
    await new Promise((resolve) => receiver?.close(resolve))
  })

  it("fires every event with its keys and the hook context; a throwing hook breaks nothing", async () => {
    llm.script(
      {
        toolCalls: [{ name: "echo", arguments: JSON.stringify({ word: "hi" }) }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }
      },
      { text: "All done" }
    )
    const response = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "Use the tool", bot_id: "hookbot", client_id: "hooks-client" })
    })
    expect(response.status).toBe(200)
    const body = await json(response)
    expect(body.response).toBe("All done")

    await waitFor(() => (seen.some((s) => s.event === "after_response") ? true : undefined), "the after_response hook")
    const byEvent = (event: HookEvent) => seen.filter((s) => s.event === event).map((s) => s.context)

    for (const context of seen.map((s) => s.context)) {
      expect(context).toMatchObject({ bot_id: "hookbot", session_id: body.session_id, client_id: "hooks-client", channel_id: null })
      expect(typeof context.correlation_id).toBe("string")
    }
    expect(byEvent("before_context_assembly")[0].extra).toEqual({ user_message: "Use the tool" })
    const beforeLlm = byEvent("before_llm_call")
    expect(beforeLlm).toHaveLength(2)
    expect(Object.keys(beforeLlm[0].extra).sort()).toEqual(["iteration", "message_count", "model", "provider_id", "tools_count"])
    // A bare model id goes to the default provider: the hooks say so (the spec's provider_id).
    expect(beforeLlm[0].extra).toMatchObject({ model: "fake-model", tools_count: 1, iteration: 1, provider_id: "default" })
    const afterLlm = byEvent("after_llm_call")
    expect(Object.keys(afterLlm[0].extra).sort()).toEqual(
      [
        "completion_tokens",
        "duration_ms",
        "fallback_model",
        "fallback_used",
        "iteration",
        "model",
        "prompt_tokens",
        "provider_id",
        "tool_calls_count",
        "total_tokens"
      ].sort()
    )
    expect(afterLlm[0].extra).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      tool_calls_count: 1,
      fallback_used: false,
      provider_id: "default"
    })
    expect(byEvent("before_tool_execution")[0].extra).toMatchObject({
      tool_name: "echo",
      tool_type: "test",
      args: { word: "hi" },
      iteration: 1
    })
    const afterTool = byEvent("after_tool_call")[0].extra
    expect(afterTool).toMatchObject({ tool_name: "echo", tool_args: { word: "hi" } })
    expect(typeof afterTool.duration_ms).toBe("number")
    expect(byEvent("after_response")[0].extra).toEqual({ response_length: "All done".length, tool_calls_made: 1 })
  })

  it("posts every event to HOOK_WEBHOOK_URLS in the spec's payload shape", async () => {
    const expected = [
      "before_context_assembly",
      "before_llm_call",
      "after_llm_call",
      "before_tool_execution",
      "after_tool_call",
      "after_response"
    ]
    // Deliveries run concurrently, so they arrive in any order: wait for all eight.
    await waitFor(() => (posted.length >= 8 ? true : undefined), "all eight hook deliveries")
    const events = posted.map((p) => p.body.event)
    expect(events.sort()).toEqual([...expected, "before_llm_call", "after_llm_call"].sort())
    const afterTool = posted.find((p) => p.body.event === "after_tool_call")!
    expect(afterTool.contentType).toContain("application/json")
    expect(Object.keys(afterTool.body).sort()).toEqual(["context", "data", "event", "timestamp"])
    expect(afterTool.body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/)
    expect(Object.keys(afterTool.body.context).sort()).toEqual(["bot_id", "channel_id", "client_id", "correlation_id", "session_id"])
    expect(afterTool.body.data).toMatchObject({ tool_name: "echo", tool_args: { word: "hi" } })
    expect(typeof afterTool.body.data.duration_ms).toBe("number")
  })
})
