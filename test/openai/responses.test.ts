/**
 * The Responses API (`POST /v1/responses`) through the `openai` npm SDK and the Vercel AI SDK's
 * OpenAI provider (which speaks the Responses API): blocking and streamed answers, the caller's
 * function tools round trip by `previous_response_id`, images, unknown ids; and chat completions'
 * `n` and `response_format`. The fake LLM stands behind the bots.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { SqlClient } from "@effect/sql"
import { generateText, jsonSchema, streamText, tool } from "ai"
import { Effect } from "effect"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { CreateBot } from "../../src/bots/Model.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

const botRequest = withDefaults(CreateBot)
// A 1x1 PNG.
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const weather: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } } },
  strict: false
}

describe.each(backends)("OpenAI Responses API (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let openai: OpenAI

  const count = (table: "sessions" | "messages" | "runs") =>
    server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`)).then((
      rows
    ) => rows[0]!.n)
  const llmMessages = () => llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages as Array<Record<string, any>>

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "0" } })
    await server.call((client) => client.bots.create({ payload: botRequest({ id: "helper", name: "Helper", system_prompt: "You help." }) }))
    openai = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  it("answers a blocking response, stored as a session its id continues", async () => {
    llm.script({ text: "Hello Ann.", usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 } })
    const first = await openai.responses.create({ model: "helper", instructions: "Be brief.", input: "I am Ann." })
    expect(first).toMatchObject({ object: "response", status: "completed", model: "helper", store: true, previous_response_id: null })
    expect(first.id).toMatch(/^resp_/)
    expect(first.output).toEqual([{
      type: "message",
      id: expect.stringMatching(/^msg_/),
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Hello Ann.", annotations: [] }]
    }])
    expect(first.output_text).toBe("Hello Ann.")
    expect(first.usage).toMatchObject({ input_tokens: 20, output_tokens: 3, total_tokens: 23 })
    expect(llmMessages().map((message) => [message.role, message.content])).toEqual([
      ["system", "You help."],
      ["system", "Be brief."],
      ["user", "I am Ann."]
    ])

    llm.script({ text: "You are Ann." })
    const second = await openai.responses.create({ model: "helper", input: "Who am I?", previous_response_id: first.id })
    expect(second.output_text).toBe("You are Ann.")
    expect(second.previous_response_id).toBe(first.id)
    // The session kept the conversation; the instructions were for the first turn only.
    expect(llmMessages().map((message) => [message.role, message.content])).toEqual([
      ["system", "You help."],
      ["user", "I am Ann."],
      ["assistant", "Hello Ann."],
      ["user", "Who am I?"]
    ])

    // An item_reference to a stored response's item continues its session as well.
    llm.script({ text: "Still Ann." })
    const third = await openai.responses.create({
      model: "helper",
      input: [{ type: "item_reference", id: second.output[0]!.id! }, { role: "user", content: "And now?" }]
    })
    expect(third.output_text).toBe("Still Ann.")
    expect(llmMessages().slice(-3).map((message) => message.content)).toEqual(["Who am I?", "You are Ann.", "And now?"])
  })

  it("stores nothing with store: false, and such a response cannot be continued", async () => {
    const before = await Promise.all([count("sessions"), count("messages"), count("runs")])
    llm.script({ text: "Hi." })
    const answer = await openai.responses.create({
      model: "cairn/helper",
      store: false,
      input: [
        { role: "user", content: "My name is Bo." },
        { role: "assistant", content: "Hello Bo." },
        { role: "user", content: [{ type: "input_text", text: "Name?" }] }
      ]
    })
    expect(answer).toMatchObject({ store: false, model: "cairn/helper", output_text: "Hi." })
    expect(llmMessages().slice(1).map((message) => message.content)).toEqual(["My name is Bo.", "Hello Bo.", "Name?"])
    expect(await Promise.all([count("sessions"), count("messages"), count("runs")])).toEqual(before)
    const unknown = await openai.responses.create({ model: "helper", input: "Again", previous_response_id: answer.id }).catch((
      error: unknown
    ) => error)
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect(unknown).toMatchObject({ status: 404, code: "previous_response_not_found", param: "previous_response_id" })
  })

  it("answers an unknown previous response id, or model, with OpenAI's 404", async () => {
    const made = `resp_${"0".repeat(31)}1${"0".repeat(32)}`
    for (const id of ["resp_nope", made]) {
      const error = await openai.responses.create({ model: "helper", input: "Hi", previous_response_id: id }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toEqual({
        message: `Previous response with id '${id}' not found.`,
        type: "invalid_request_error",
        param: "previous_response_id",
        code: "previous_response_not_found"
      })
    }
    const model = await openai.responses.create({ model: "no-such-bot", input: "Hi" }).catch((e: unknown) => e)
    expect(model).toMatchObject({ status: 404, code: "model_not_found" })
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(0)
  })

  it("streams the documented events in order, each with its sequence number", async () => {
    llm.script({ text: "one two three", usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })
    const stream = await openai.responses.create({ model: "helper", input: "Count", stream: true })
    const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
    for await (const event of stream) events.push(event)
    const types = events.map((event) => event.type)
    const deltas = events.flatMap((event) => (event.type === "response.output_text.delta" ? [event.delta] : []))
    expect(deltas.join("")).toBe("one two three")
    expect(deltas.length).toBeGreaterThan(1)
    expect(types.filter((type) => type !== "response.output_text.delta")).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed"
    ])
    expect(types.indexOf("response.output_text.delta")).toBe(4)
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index))
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect(completed.response).toMatchObject({ status: "completed", id: (events[0] as OpenAI.Responses.ResponseCreatedEvent).response.id })
    expect(completed.response.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, total_tokens: 10 })
    expect(events.find((event) => event.type === "response.output_text.done")).toMatchObject({ text: "one two three" })

    // A failed turn ends with response.failed.
    llm.script({ status: 500 })
    const failing = await openai.responses.create({ model: "helper", input: "Hi", stream: true, store: false })
    const last: Array<OpenAI.Responses.ResponseStreamEvent> = []
    for await (const event of failing) last.push(event)
    expect(last.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "run_failed" } } })
  })

  it("returns a call to the caller's function and continues with its output by previous_response_id", async () => {
    llm.script({ toolCalls: [{ id: "call_r1", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" }] })
    const first = await openai.responses.create({ model: "helper", input: "Weather in Oslo?", tools: [weather] })
    expect(first.output).toEqual([{
      type: "function_call",
      id: expect.stringMatching(/^fc_/),
      status: "completed",
      call_id: "call_r1",
      name: "get_weather",
      arguments: "{\"city\":\"Oslo\"}"
    }])
    expect(llm.requestsTo("/v1/chat/completions").at(-1)!.body.tools.map((offered: any) => offered.function.name)).toContain(
      "get_weather"
    )

    llm.script({ text: "Sunny in Oslo." })
    const second = await openai.responses.create({
      model: "helper",
      previous_response_id: first.id,
      tools: [weather],
      input: [{ type: "function_call_output", call_id: "call_r1", output: "sunny, 21 C" }]
    })
    expect(second.output_text).toBe("Sunny in Oslo.")
    expect(llmMessages().slice(-3)).toMatchObject([
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", tool_calls: [{ id: "call_r1", function: { name: "get_weather" } }] },
      { role: "tool", tool_call_id: "call_r1", content: "sunny, 21 C" }
    ])

    // Streamed, the call comes as an item with its arguments.
    llm.script({ toolCalls: [{ id: "call_r2", name: "get_weather", arguments: "{\"city\":\"Rome\"}" }] })
    const stream = await openai.responses.create({ model: "helper", input: "Rome?", tools: [weather], stream: true, store: false })
    const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
    for await (const event of stream) events.push(event)
    expect(events.map((event) => event.type).slice(2)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed"
    ])
    expect(events.find((event) => event.type === "response.function_call_arguments.done")).toMatchObject({
      name: "get_weather",
      arguments: "{\"city\":\"Rome\"}"
    })
  })

  it("passes an input image to the model, and refuses an output that answers nothing", async () => {
    llm.script({ text: "A dot." })
    const answer = await openai.responses.create({
      model: "helper",
      store: false,
      input: [{
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: `data:image/png;base64,${png}`, detail: "auto" }
        ]
      }]
    })
    expect(answer.output_text).toBe("A dot.")
    const content = llmMessages().at(-1)!.content as Array<Record<string, any>>
    expect(content).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: "text", text: "What is this?" }),
      expect.objectContaining({ type: "image_url", image_url: expect.objectContaining({ url: `data:image/png;base64,${png}` }) })
    ]))

    const stray = await openai.responses.create({
      model: "helper",
      store: false,
      input: [{ type: "function_call_output", call_id: "call_none", output: "x" }]
    }).catch((error: unknown) => error)
    expect(stray).toBeInstanceOf(OpenAI.APIError)
    expect((stray as InstanceType<typeof OpenAI.APIError>).status).toBe(422)
  })

  it("answers n choices of a stateless chat completion, refuses n > 1 where it cannot, and takes JSON formats to the model", async () => {
    llm.script({ text: "same answer" }, { text: "same answer" })
    const many = await openai.chat.completions.create({ model: "helper", n: 2, messages: [{ role: "user", content: "Hi" }] })
    expect(many.choices.map((choice) => [choice.index, choice.message.content])).toEqual([[0, "same answer"], [1, "same answer"]])
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(2)

    for (const extra of [{ user: "nina" }, { stream: true }]) {
      const refused = await fetch(`${server.baseUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "helper", n: 2, messages: [{ role: "user", content: "Hi" }], ...extra })
      })
      expect(refused.status).toBe(400)
      expect(await refused.json()).toMatchObject({ error: { type: "invalid_request_error", param: "n", code: "unsupported_parameter" } })
    }

    // JSON formats reach the bot's model call as sent; an unknown one is refused.
    llm.script({ text: "{\"ok\": true}" })
    const json = await openai.chat.completions.create({
      model: "helper",
      response_format: { type: "json_object" },
      messages: [{ role: "user", content: "Hi" }]
    })
    expect(json.choices[0]!.message.content).toBe("{\"ok\": true}")
    expect((llm.requestsTo("/v1/chat/completions").at(-1)!.body as any).response_format).toEqual({ type: "json_object" })
    const schema = { name: "answer", schema: { type: "object", properties: { ok: { type: "boolean" } } }, strict: true }
    llm.script({ text: "{\"ok\": true}" })
    await openai.responses.create({ model: "helper", input: "Hi", text: { format: { type: "json_schema", ...schema } } })
    expect((llm.requestsTo("/v1/chat/completions").at(-1)!.body as any).response_format).toEqual({
      type: "json_schema",
      json_schema: schema
    })
    const unknown = await openai.chat.completions.create({
      model: "helper",
      response_format: { type: "xml" } as any,
      messages: [{ role: "user", content: "Hi" }]
    }).catch((error: unknown) => error)
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError)
    expect(unknown).toMatchObject({ param: "response_format", code: "unsupported_parameter" })
    llm.script({ text: "plain" })
    const text = await openai.chat.completions.create({
      model: "helper",
      response_format: { type: "text" },
      messages: [{ role: "user", content: "Hi" }]
    })
    expect(text.choices[0]!.message.content).toBe("plain")
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(5)
  })

  it("serves the Vercel AI SDK's OpenAI provider: generateText with a tool round trip, and streamText", async () => {
    const provider = createOpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: server.apiKey })
    const sessionsBefore = await count("sessions")
    llm.script(
      { toolCalls: [{ id: "call_v1", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" }] },
      { text: "It is sunny in Oslo." }
    )
    const result = await generateText({
      model: provider("helper"),
      prompt: "Weather in Oslo?",
      tools: {
        get_weather: tool({
          description: "The weather in a city",
          inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
          execute: async ({ city }) => `sunny in ${city}`
        })
      },
      stopWhen: ({ steps }) => steps.length >= 2
    })
    expect(result.text).toBe("It is sunny in Oslo.")
    expect(result.steps[0]!.toolCalls.map((call) => call.toolName)).toEqual(["get_weather"])
    expect(llmMessages().slice(-2)).toMatchObject([
      { role: "assistant", tool_calls: [{ id: "call_v1" }] },
      { role: "tool", tool_call_id: "call_v1", content: expect.stringContaining("sunny in Oslo") }
    ])
    // Each step sent the whole conversation without an id to continue: each is a stored session of its own.
    expect(await count("sessions")).toBe(sessionsBefore + 2)

    llm.script({ text: "streamed words here" })
    const streamed = streamText({ model: provider("helper"), prompt: "Say something" })
    let text = ""
    for await (const delta of streamed.textStream) text += delta
    expect(text).toBe("streamed words here")
    expect((await streamed.usage).totalTokens).toBeGreaterThan(0)
  })
})
