/**
 * The fake LLM's quirks (test/fixtures/README.md): a server without JSON mode
 * (`rejectResponseFormat`, as an option or on one reply), a connection dropped mid-stream
 * (`dropAfterChunks`) and reasoning written inline in `<think>` tags (`thinkTags`), on the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"

const ask = (llm: FakeLlm, body: Record<string, unknown>) =>
  fetch(`${llm.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }], ...body })
  })
/** The text of a blocking answer. */
const contentOf = async (response: Response): Promise<unknown> => ((await response.json()) as any).choices[0].message.content
const jsonMode = { response_format: { type: "json_object" } }
const refusal = { error: { message: "response_format is not supported" } }

describe("the fake LLM's quirks", () => {
  let llm: FakeLlm
  let strict: FakeLlm
  beforeAll(async () => {
    llm = await startFakeLlm()
    strict = await startFakeLlm({ rejectResponseFormat: true })
  })
  afterAll(async () => {
    await llm?.close()
    await strict?.close()
  })

  it("refuses response_format with a 400 as a server without JSON mode does, and answers without it", async () => {
    strict.script({ text: "first" })
    const refused = await ask(strict, jsonMode)
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual(refusal)
    // The refusal used no scripted reply.
    expect(await contentOf(await ask(strict, {}))).toBe("first")

    // On one reply: refused while the request carries response_format, then that reply answers.
    llm.script({ rejectResponseFormat: true, text: "kept" }, { text: "next" })
    expect((await ask(llm, jsonMode)).status).toBe(400)
    expect((await ask(llm, jsonMode)).status).toBe(400)
    expect(await contentOf(await ask(llm, {}))).toBe("kept")
    expect(await contentOf(await ask(llm, jsonMode))).toBe("next")
  })

  it("writes reasoning inline in <think> tags, blocking and streamed", async () => {
    llm.script({ thinkTags: "plan {it}", text: "answer" }, { thinkTags: "plan", text: "answer now" })
    expect(await contentOf(await ask(llm, {}))).toBe("<think>plan {it}</think>answer")
    const streamed = await (await ask(llm, { stream: true })).text()
    const deltas = streamed.split("\n\n").filter((frame) => frame.startsWith("data: {")).map((frame) => JSON.parse(frame.slice(6)))
    const text = deltas.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")
    expect(text).toBe("<think>plan</think>answer now")
    expect(deltas.every((chunk) => chunk.choices[0]?.delta?.reasoning_content === undefined)).toBe(true)
  })

  it("drops the connection after some chunks of a stream, without a finish chunk or [DONE]", async () => {
    llm.script({ text: "one two three four", dropAfterChunks: 2 })
    const response = await ask(llm, { stream: true })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    let received = ""
    const ended = await (async () => {
      for (;;) {
        const chunk = await reader.read().catch((error: unknown) => ({ error }))
        if ("error" in chunk) return "dropped"
        if (chunk.done) return "ended"
        received += new TextDecoder().decode(chunk.value)
      }
    })()
    expect(ended).toBe("dropped")
    expect(received).toContain("\"content\":\"one \"")
    expect(received).toContain("\"content\":\"two \"")
    expect(received).not.toContain("three")
    expect(received).not.toContain("finish_reason\":\"stop")
    expect(received).not.toContain("[DONE]")
  })
})
