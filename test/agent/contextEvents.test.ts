/**
 * Context-assembly events (spec: "prefixed with a source type, emitted for debugging"): a bot with
 * `context_events` on sends one `context.<source>` event per source of its turn's context before
 * the model answers; a bot without (the default) sends none, and its stream is what clients expect.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CreateBot } from "../../src/bots/Model.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { streamedEvents } from "../support/sse.ts"

const botRequest = withDefaults(CreateBot)
const contextTypes = ["context.bot", "context.carapaces", "context.execution_config", "context.workspace", "context.retrieval"]

describe.each(backends)("context-assembly events (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Noted." } })
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-context", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    })
    await server.call((client) =>
      client.bots.create({
        payload: botRequest({
          id: "debuggable",
          name: "Debuggable",
          tools: ["current_time"],
          skills: ["concise-answers"],
          context_events: true
        })
      })
    )
    await server.call((client) => client.bots.create({ payload: botRequest({ id: "quiet", name: "Quiet", tools: ["current_time"] }) }))
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("sends one event per source, before the answer, for a bot that asks for them", async () => {
    const events = await streamedEvents(server, { message: "What is in your context?", bot_id: "debuggable", client_id: "ctx-1" })
    const context = events.filter((event) => String(event.type).startsWith("context."))
    expect(context.map((event) => event.type)).toEqual(contextTypes)
    expect(context[0]).toEqual({ type: "context.bot", tools: ["current_time"], skills: ["concise-answers"], preamble: "" })
    expect(context.at(-1)).toEqual({ type: "context.retrieval", tools: [], skills: [], preamble: "" })
    const firstText = events.findIndex((event) => event.type === "assistant_text")
    expect(events.findIndex((event) => event.type === "context.retrieval")).toBeLessThan(firstText)
    expect(events.at(-1)).toMatchObject({ type: "response", text: "Noted." })
  })

  it("sends none by default, and the setting can be turned on and off", async () => {
    const quiet = await streamedEvents(server, { message: "Hello", bot_id: "quiet", client_id: "ctx-2" })
    expect(quiet.some((event) => String(event.type).startsWith("context."))).toBe(false)
    const updated = await server.call((client) => client.bots.update({ path: { id: "quiet" }, payload: { context_events: true } }))
    expect(updated.context_events).toBe(true)
    const loud = await streamedEvents(server, { message: "Hello again", bot_id: "quiet", client_id: "ctx-2" })
    expect(loud.filter((event) => String(event.type).startsWith("context.")).map((event) => event.type)).toEqual(contextTypes)
  })
})
