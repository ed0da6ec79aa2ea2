/**
 * The agent loop against models that misbehave (issue 53): tool arguments that are not JSON, a tool
 * name nothing offers, an empty answer, and a connection dropped mid-stream. A malformed call is not
 * run: the model gets a tool result saying what was wrong and may try again, at most
 * `maxToolCallRepairs` times a turn; an empty answer is asked for once more, then the run ends with
 * an `error` event and nothing empty is stored.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { maxToolCallRepairs } from "../../src/agent/Loop.ts"
import { foreignTool } from "../../src/agent/Tool.ts"
import { ToolRegistry } from "../../src/agent/Tools.ts"
import { CreateBot } from "../../src/bots/Model.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { streamedEvents } from "../support/sse.ts"

const botRequest = withDefaults(CreateBot)

describe.each(backends)("the agent loop with models that misbehave (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  /** Every run of the `tally` tool, with the arguments it got. */
  const tallied: Array<Record<string, unknown>> = []
  let clients = 0

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-quirks", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    })
    await server.run(
      Effect.flatMap(ToolRegistry, (tools) =>
        tools.register(foreignTool({
          name: "tally",
          description: "Counts sheep",
          parameters: { type: "object", properties: { sheep: { type: "number" } } },
          source: "test",
          execute: (args) => {
            tallied.push(args)
            return `counted ${String(args.sheep)}`
          }
        })))
    )
    await server.call((client) =>
      client.bots.create({ payload: botRequest({ id: "shepherd", name: "Shepherd", tools: ["tally", "current_time"] }) })
    )
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => {
    llm.reset()
    tallied.length = 0
  })

  const turn = (message: string) => streamedEvents(server, { message, bot_id: "shepherd", client_id: `loop-${++clients}` })
  const sessionOf = (events: ReadonlyArray<any>) => events.find((event) => event.type === "response").session_id as string
  const messagesOf = (id: string) => server.call((client) => client.sessions.messages({ path: { id } }))
  const sent = () => llm.requestsTo("/v1/chat/completions").map((request) => request.body.messages as Array<any>)

  it("does not run a tool on arguments that are not JSON: the model is told, tries again, and the tool runs once", async () => {
    llm.script(
      { toolCalls: [{ id: "call_bad", name: "tally", arguments: "{\"sheep\": 3," }] },
      { toolCalls: [{ id: "call_good", name: "tally", arguments: "{\"sheep\": 3}" }] },
      { text: "Three sheep." }
    )
    const events = await turn("Count the sheep")
    expect(tallied).toEqual([{ sheep: 3 }])
    const results = events.filter((event) => event.type === "tool_result")
    expect(results.map((event) => [event.tool_call_id, event.is_error])).toEqual([["call_bad", true], ["call_good", false]])
    expect(results[0].result).toMatch(/^Error: the arguments of tally were not valid JSON \(.+\); the tool was not run\./)
    expect(results[1].result).toBe("counted 3")
    expect(events.at(-1)).toMatchObject({ type: "response", text: "Three sheep.", tools_used: ["tally"] })
    // The model saw why: the refusal is the tool message of its broken call.
    expect(sent()[1].at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_bad", content: results[0].result })
    const stored = await messagesOf(sessionOf(events))
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"])
  })

  it("answers a tool name nothing offers with the tools there are", async () => {
    llm.script({ toolCalls: [{ id: "call_ghost", name: "count_goats", arguments: "{}" }] }, { text: "No goats then." })
    const events = await turn("Count the goats")
    const result = events.find((event) => event.type === "tool_result")
    expect(result).toMatchObject({ tool_call_id: "call_ghost", is_error: true })
    expect(result.result).toBe("Error: there is no tool named count_goats. The tools you can call: tally, current_time.")
    expect(events.at(-1)).toMatchObject({ type: "response", text: "No goats then.", tools_used: [] })
  })

  it(`ends the turn with an error after ${maxToolCallRepairs} corrections, every call's result stored`, async () => {
    const broken = (n: number) => ({ toolCalls: [{ id: `call_${n}`, name: "tally", arguments: "sheep=3" }] })
    llm.script(...Array.from({ length: maxToolCallRepairs + 1 }, (_, n) => broken(n)), { text: "never asked for" })
    const events = await turn("Count them properly")
    expect(tallied).toEqual([])
    expect(events.filter((event) => event.type === "tool_result")).toHaveLength(maxToolCallRepairs + 1)
    expect(events.slice(-2).map((event) => event.type)).toEqual(["error", "response"])
    expect(events.at(-2).message).toMatch(
      /tool calls could not run 3 times in this turn; the last: the arguments of tally were not valid JSON/
    )
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(maxToolCallRepairs + 1)
    const stored = await messagesOf(sessionOf(events))
    expect(stored.map((m) => m.role)).toEqual([
      "user",
      ...Array.from({ length: maxToolCallRepairs + 1 }, () => ["assistant", "tool"]).flat()
    ])
  })

  it("asks once more after an empty answer, unstored, and keeps the real one", async () => {
    llm.script({}, { text: "Here I am." })
    const events = await turn("Hello?")
    expect(events.at(-1)).toMatchObject({ type: "response", text: "Here I am." })
    expect(events.some((event) => event.type === "error")).toBe(false)
    const [first, second] = sent()
    expect(second.slice(0, -1)).toEqual(first)
    expect(second.at(-1)).toMatchObject({ role: "user", content: expect.stringMatching(/^Your answer was empty\./) })
    const stored = await messagesOf(sessionOf(events))
    expect(stored.map((m) => [m.role, m.content])).toEqual([["user", "Hello?"], ["assistant", "Here I am."]])
  })

  it("ends the run with an error event after two empty answers, and stores no empty answer", async () => {
    llm.script({ text: "" }, { text: "  \n" }, { text: "never asked for" })
    const events = await turn("Anyone?")
    expect(events.slice(-2).map((event) => event.type)).toEqual(["error", "response"])
    expect(events.at(-2).message).toBe(
      "The model call failed: the model's answer was empty twice (no text, no tool call); no answer was stored"
    )
    // The response carries what was streamed (here only whitespace), as any failed run's does.
    expect(events.at(-1).text.trim()).toBe("")
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(2)
    const stored = await messagesOf(sessionOf(events))
    expect(stored.map((m) => [m.role, m.content])).toEqual([["user", "Anyone?"]])
  })

  it("ends the run with an error event when the stream is dropped mid-answer; what was streamed reaches the response", async () => {
    llm.script({ text: "one two three four five six", dropAfterChunks: 3 })
    const events = await turn("Count to six")
    const texts = events.filter((event) => event.type === "assistant_text")
    expect(texts.at(-1).text).toBe("one two three ")
    expect(events.slice(-2).map((event) => event.type)).toEqual(["error", "response"])
    expect(events.at(-2).message).toMatch(/^The model call failed: /)
    // The run's response carries the streamed part; a failed turn stores no answer (a cancelled one would).
    expect(events.at(-1)).toMatchObject({ type: "response", text: "one two three " })
    // Nothing is retried once output was sent.
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)
    const stored = await messagesOf(sessionOf(events))
    expect(stored.map((m) => m.role)).toEqual(["user"])
  })
})
