/**
 * The operations that read a model's JSON answer, against models that misbehave (issue 53): a JSON
 * object wrapped in prose or fences, a server that refuses `response_format` with a 400, a model
 * that never answers JSON, one that thinks aloud in `<think>` tags, and an empty answer. Summaries
 * (`/sessions/{id}/summarize`), compaction (`/api/v1/admin/sessions/{id}/compact`) and the
 * reranker each read the answer tolerantly, ask once more, and then fall back as docs/api.md says
 * ("Models that misbehave"), never a 502 for an answer that has text.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fallbackTitle } from "../../src/agent/Compaction.ts"
import { CreateBot } from "../../src/bots/Model.ts"
import { ChatRequest } from "../../src/chat/Model.ts"
import { ProviderFailed } from "../../src/providers/Errors.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { streamedEvents } from "../support/sse.ts"

const chatRequest = withDefaults(ChatRequest)
const botRequest = withDefaults(CreateBot)

const summary = { title: "Lighthouse night", summary: "The user asked about trimming the lamp; the keeper does it at dusk." }
const summaryJson = JSON.stringify(summary)

describe.each(backends)("JSON answers from models that misbehave (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let sessions = 0

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-quirks", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    })
    await server.call((client) =>
      client.bots.create({ payload: botRequest({ id: "picky", name: "Picky", retrieval: { enabled: true, top_k: 2, rerank: "llm" } }) })
    )
    for (
      const [title, content] of [
        ["Lighthouse keeping", "Lighthouse keepers trimmed the wicks of the lamps every night so the light burned bright."],
        ["Bread baking", "Knead the dough for ten minutes, then let it rise in a warm place for an hour."],
        ["Lamp oil", "Whale oil and later kerosene fuelled lighthouse lamps; keepers carried the oil up the tower."]
      ]
    ) {
      await server.call((client) => client.documents.create({ payload: { title: title!, content: content!, integration_id: "library" } }))
    }
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  /** A session of three turns (the fake's default answer), for a summary to cover. */
  const conversation = async () => {
    const clientId = `quirks-${++sessions}`
    let sessionId = ""
    for (const message of ["When is the lamp trimmed?", "Who carries the oil?", "Thank you"]) {
      sessionId = (await server.call((client) => client.chat.chat({ payload: chatRequest({ message, client_id: clientId }) }))).session_id
    }
    llm.reset()
    return sessionId
  }
  const summarize = (id: string) => server.call((client) => client.chat.summarize({ path: { id } }))
  const compact = (id: string) => server.call((client) => client.chat.compact({ path: { id } }))
  const calls = () => llm.requestsTo("/v1/chat/completions").map((request) => request.body)

  it("reads a title and summary wrapped in prose and fences, in JSON mode, with one call", async () => {
    const id = await conversation()
    llm.script({ text: `Of course! Here is the summary:\n\n\`\`\`json\n${summaryJson}\n\`\`\`\n\nAnything else?` })
    expect(await summarize(id)).toEqual(summary)
    expect(calls()).toHaveLength(1)
    expect(calls()[0]).toMatchObject({ temperature: 0, response_format: { type: "json_object" } })
  })

  it("asks again without response_format when the server refuses it with a 400", async () => {
    const id = await conversation()
    llm.script({ rejectResponseFormat: true, text: summaryJson })
    expect(await summarize(id)).toEqual(summary)
    const [refused, plain] = calls()
    expect(refused.response_format).toEqual({ type: "json_object" })
    expect(plain.response_format).toBeUndefined()
    expect(plain.messages).toEqual(refused.messages)
    expect(calls()).toHaveLength(2)
  })

  it("asks once more, saying the shape, then keeps a model's prose as the summary under the fallback title", async () => {
    const id = await conversation()
    llm.script({ text: "The keeper trims the lamp at dusk." }, { text: "The user learned that the keeper trims the lamp at dusk." })
    expect(await summarize(id)).toEqual({ title: fallbackTitle, summary: "The user learned that the keeper trims the lamp at dusk." })
    expect(fallbackTitle).toBe("Conversation")
    const [first, again] = calls()
    expect(again.response_format).toBeUndefined()
    expect(again.messages.slice(0, first.messages.length)).toEqual(first.messages)
    expect(again.messages.at(-2)).toEqual({ role: "assistant", content: "The keeper trims the lamp at dusk." })
    expect(again.messages.at(-1).role).toBe("user")
    expect(again.messages.at(-1).content).toMatch(/^Your answer was not the JSON asked for: the answer holds no JSON\./)
    expect(again.messages.at(-1).content).toContain("{\"title\": \"<at most 8 words>\", \"summary\": \"<at most 250 words>\"}")
    // The fallback is stored as the session's summary version, as a decoded one would be.
    const versions = await server.call((client) => client.chat.summaries({ path: { id } }))
    expect(versions.at(-1)).toMatchObject({ trigger: "summarize", summary: "The user learned that the keeper trims the lamp at dusk." })
  })

  it("takes the answer that comes when asked again, and the think block's braces never count", async () => {
    const id = await conversation()
    llm.script({ text: "Sure." }, { thinkTags: "They want {\"title\": ...}; the lamp { is trimmed at dusk", text: summaryJson })
    expect(await summarize(id)).toEqual(summary)
    expect(calls()).toHaveLength(2)
  })

  it("answers 502 only when the model said nothing at all, twice", async () => {
    const id = await conversation()
    llm.script({ text: "" }, { text: "   " })
    const failed = await server.failsWith(ProviderFailed, (client) => client.chat.summarize({ path: { id } }))
    expect(failed.detail).toMatch(/answered nothing/)
  })

  it("compacts with a model that ignores JSON mode: the prose becomes the new version", async () => {
    const id = await conversation()
    llm.script({ text: "Earlier: the lamp and the oil." }, { text: "Earlier turns: the lamp is trimmed at dusk, the keepers carry oil." })
    const version = await compact(id)
    expect(version).toMatchObject({ trigger: "admin", summary: "Earlier turns: the lamp is trimmed at dusk, the keepers carry oil." })
    expect(calls()).toHaveLength(2)
  })

  it("compacts through a server that refuses response_format and a model that fences its JSON", async () => {
    const id = await conversation()
    llm.script({ rejectResponseFormat: true, text: `\`\`\`json\n${JSON.stringify({ ...summary, summary: "FENCED" })}\n\`\`\`` })
    expect(await compact(id)).toMatchObject({ trigger: "admin", summary: "FENCED" })
  })

  it("reranks with a ranking in fences and prose, and keeps the hybrid order when the model never ranks", async () => {
    const question = "How did lighthouse keepers look after the lamps?"
    llm.script({ text: "Here you go:\n```json\n{\"ranked\": [2]}\n```" }, { text: "Answered." })
    const events = await streamedEvents(server, { message: question, bot_id: "picky", client_id: "rerank-fenced" })
    const rag = events.find((event) => event.type === "rag_rerank")
    expect(rag.reranker).toBe("llm")
    expect(rag.kept).toEqual([rag.candidates[1]])
    expect(events.at(-1)).toMatchObject({ type: "response", text: "Answered." })

    llm.reset()
    llm.script({ text: "They all look useful to me." }, { text: "Truly, all of them." }, { text: "Answered." })
    const unranked = await streamedEvents(server, { message: question, bot_id: "picky", client_id: "rerank-prose" })
    const hybrid = unranked.find((event) => event.type === "rag_rerank")
    expect(hybrid.reranker).toBe("hybrid")
    expect(hybrid.kept).toEqual(hybrid.candidates.slice(0, 2))
    // Asked again once, then the turn's own call.
    expect(calls()).toHaveLength(3)
    expect(calls()[1].messages.at(-1).content).toContain("{\"ranked\": [3, 1]}")
    expect(unranked.at(-1)).toMatchObject({ type: "response", text: "Answered." })
  })
})
