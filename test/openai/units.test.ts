/**
 * The OpenAI surface's pure parts: reading a request's messages as a turn, the chunk frames of a
 * streamed turn, and reshaping `{detail}` into OpenAI's error body.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { TurnResult } from "../../src/agent/Turn.ts"
import { makeChunkStream } from "../../src/openai/Chunks.ts"
import { readConversation } from "../../src/openai/Conversation.ts"
import { toOpenAiError } from "../../src/openai/Errors.ts"
import type { CompletionMessage } from "../../src/openai/Model.ts"

const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

const read = (messages: ReadonlyArray<CompletionMessage>) => readConversation(messages)

describe("readConversation", () => {
  it("takes the last user message as new, the rest as history, and system messages as the preamble", () => {
    const read1 = Either.getOrThrow(
      read([
        { role: "system", content: "Be brief." },
        { role: "developer", content: [{ type: "text", text: "Use metric units." }] },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
        {
          role: "user",
          content: [{ type: "text", text: "Look" }, { type: "image_url", image_url: { url: `data:image/png;base64,${pixel}` } }]
        }
      ])
    )
    expect(read1.preamble).toBe("Be brief.\n\nUse metric units.")
    expect(read1.history.map((row) => [row.role, row.content])).toEqual([
      ["user", "Hi"],
      ["assistant", "Hello"]
    ])
    expect(read1.input.text).toBe("Look")
    expect(read1.input.images).toEqual([{ type: "image", mime_type: "image/png", name: "image-5-2", data: pixel }])
    expect(read1.input.toolResults).toEqual([])
  })

  it("takes the tool results after the last assistant message as new, keeping them in the history", () => {
    const call = { id: "call_1", type: "function" as const, function: { name: "f", arguments: "{}" } }
    const read2 = Either.getOrThrow(
      read([
        { role: "user", content: "Go" },
        { role: "assistant", content: null, tool_calls: [call, { ...call, id: "call_2" }] },
        { role: "tool", tool_call_id: "call_1", content: "one" },
        { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "two" }] }
      ])
    )
    expect(read2.input).toEqual({
      text: "",
      images: [],
      toolResults: [{ tool_call_id: "call_1", content: "one" }, { tool_call_id: "call_2", content: "two" }]
    })
    expect(read2.history.map((row) => row.role)).toEqual(["user", "assistant", "tool", "tool"])
    expect(read2.history[1]!.tool_calls).toEqual([call, { ...call, id: "call_2" }])
  })

  it("refuses a conversation that does not end with the user or with tool results after an assistant", () => {
    const lastAssistant = read([{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello" }])
    expect(Either.isLeft(lastAssistant) && lastAssistant.left.detail[0]!.loc).toEqual(["body", "messages", 1, "role"])
    const orphanTool = read([{ role: "user", content: "Hi" }, { role: "tool", tool_call_id: "x", content: "y" }])
    expect(Either.isLeft(orphanTool) && orphanTool.left.detail[0]!.loc).toEqual(["body", "messages", 1, "role"])
    const onlySystem = read([{ role: "system", content: "Be brief." }])
    expect(Either.isLeft(onlySystem)).toBe(true)
  })

  it("refuses an image that is neither a known image's data: URL nor an http(s) URL, saying where", () => {
    const bad = read([{ role: "user", content: [{ type: "image_url", image_url: { url: "data:text/plain;base64,aGk=" } }] }])
    expect(Either.isLeft(bad) && bad.left.detail.map((issue) => issue.loc)).toEqual([[
      "body",
      "messages",
      0,
      "content",
      0,
      "image_url",
      "url"
    ]])
    const remote = Either.getOrThrow(
      read([{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }])
    )
    expect(remote.input.images[0]).toMatchObject({ url: "https://example.com/a.png" })
  })
})

const frames = (lines: ReadonlyArray<string>) =>
  lines.map((line) => {
    const data = line.replace(/^data: /, "").trim()
    return data === "[DONE]" ? "[DONE]" : JSON.parse(data)
  })

const result = (overrides: Partial<TurnResult> = {}): TurnResult => ({
  text: "",
  toolsUsed: [],
  clientActions: [],
  toolCalls: [],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  ...overrides
})

describe("makeChunkStream", () => {
  const identity = { id: "chatcmpl-1", created: 1, model: "default" }

  it("opens with the role, streams text, starts a paragraph after a tool, then finishes, usage and [DONE]", () => {
    const chunks = makeChunkStream(identity, true)
    const budget = { type: "context_budget", used: 10, limit: 100, retrieval: 0 } as const
    const out = frames([
      ...chunks.onEvent(budget),
      ...chunks.onEvent({ type: "assistant_text", text: "Let me", delta: "Let me" }),
      ...chunks.onEvent({ type: "tool_start", tool: "add", name: "add", args: {}, tool_call_id: "c" }),
      ...chunks.onEvent({ type: "tool_result", tool: "add", name: "add", result: "5", duration_ms: 1, tool_call_id: "c", is_error: false }),
      ...chunks.onEvent(budget),
      ...chunks.onEvent({ type: "assistant_text", text: "Five", delta: "Five" }),
      ...chunks.onEvent({ type: "response", text: "Five", tools_used: ["add"], client_actions: [], session_id: "" }),
      ...chunks.onComplete(result({ text: "Five" }))
    ])
    expect(out[0].choices[0].delta).toEqual({ role: "assistant", content: "" })
    expect(out.slice(1, 3).map((chunk) => chunk.choices[0].delta.content)).toEqual(["Let me", "\n\nFive"])
    expect(out[3].choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" })
    expect(out[3].usage).toBeNull()
    expect(out[4]).toMatchObject({ choices: [], usage: { total_tokens: 3 } })
    expect(out[5]).toBe("[DONE]")
  })

  it("sends the text of a step that called the caller's tool once, however many tools ran in it", () => {
    const chunks = makeChunkStream(identity, false)
    const budget = { type: "context_budget", used: 10, limit: 100, retrieval: 0 } as const
    const out = frames([
      ...chunks.onEvent(budget),
      ...chunks.onEvent({ type: "assistant_text", text: "I'll check", delta: "I'll check" }),
      // A server tool of the same step runs before the turn ends for the caller's.
      ...chunks.onEvent({ type: "tool_start", tool: "add", name: "add", args: {}, tool_call_id: "a" }),
      ...chunks.onEvent({ type: "tool_result", tool: "add", name: "add", result: "5", duration_ms: 1, tool_call_id: "a", is_error: false }),
      ...chunks.onComplete(result({ text: "I'll check", toolCalls: [{ id: "b", name: "weather", arguments: "{}" }] }))
    ])
    expect(out.flatMap((chunk) => (chunk.choices?.[0]?.delta.content ? [chunk.choices[0].delta.content] : []))).toEqual(["I'll check"])
  })

  it("sends an answer that came whole at the end, and the caller's tool calls before the finish", () => {
    const chunks = makeChunkStream(identity, false)
    const out = frames(
      chunks.onComplete(result({ text: "Checking.", toolCalls: [{ id: "call_1", name: "weather", arguments: "{\"city\":\"Oslo\"}" }] }))
    )
    expect(out[1].choices[0].delta).toEqual({ content: "Checking." })
    expect(out[2].choices[0].delta).toEqual({
      tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "weather", arguments: "{\"city\":\"Oslo\"}" } }]
    })
    expect(out[3].choices[0].finish_reason).toBe("tool_calls")
    expect("usage" in out[3]).toBe(false)
    expect(out.at(-1)).toBe("[DONE]")
  })

  it("ends a failed turn with OpenAI's error object and no [DONE]", () => {
    const chunks = makeChunkStream(identity, false)
    const out = frames(chunks.onFailure({ message: "The model call failed: 500", type: "server_error", code: "run_failed" }))
    expect(out.at(-1)).toEqual({ error: { message: "The model call failed: 500", type: "server_error", param: null, code: "run_failed" } })
    expect(out).not.toContain("[DONE]")
  })
})

describe("toOpenAiError", () => {
  it("gives a validation's first place as param and keeps every issue in the message", () => {
    expect(
      toOpenAiError(422, [
        { loc: ["body", "messages", 0, "role"], msg: "Expected user", type: "literal" },
        { loc: ["body", "model"], msg: "is missing", type: "missing" }
      ])
    ).toEqual({
      error: {
        message: "messages.0.role: Expected user; model: is missing",
        type: "invalid_request_error",
        param: "messages.0.role",
        code: "literal"
      }
    })
  })

  it("names a status's kind: 401, 429 and a server failure", () => {
    expect(toOpenAiError(401, "Not authenticated").error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_api_key",
      message: "Not authenticated"
    })
    expect(toOpenAiError(429, "Too many requests").error).toMatchObject({ type: "requests", code: "rate_limit_exceeded" })
    expect(toOpenAiError(500, "Internal server error").error).toMatchObject({ type: "server_error", code: null })
  })
})
