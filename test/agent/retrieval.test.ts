/**
 * Retrieval in the turn: with a bot's (or channel's) retrieval on, the user's message is searched
 * over the documents before the model call; the kept passages reach the model with their sources
 * (the fake LLM's request log shows them), `rag_rerank` says what was found and kept, and
 * `context_budget.retrieval` what it cost. Off, nothing of it happens. `rerank: llm` lets the model
 * reorder and filter; the bot's own notes join up to `notes_top_k`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { streamedEvents } from "../support/sse.ts"

const library = [
  { title: "Lighthouse keeping", content: "Lighthouse keepers trimmed the wicks of the lamps every night so the light burned bright." },
  { title: "Bread baking", content: "Knead the dough for ten minutes, then let it rise in a warm place for an hour." },
  { title: "Lamp oil", content: "Whale oil and later kerosene fuelled lighthouse lamps; keepers carried the oil up the tower." }
]

describe.each(backends)("retrieval in the turn (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Answered." } })
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-rag", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    })
    for (const doc of library) {
      const stored = await server.request("/api/v1/documents", {
        method: "POST",
        body: JSON.stringify({ ...doc, integration_id: "library" })
      })
      expect(stored.status).toBeLessThan(300)
    }
    for (
      const [id, retrieval] of [
        ["librarian", { enabled: true, top_k: 2 }],
        ["picky", { enabled: true, top_k: 2, rerank: "llm", rerank_candidates: 3 }],
        ["strict", { enabled: true, min_score: 0.999 }]
      ] as const
    ) {
      const bot = await server.request("/api/v1/admin/bots", {
        method: "POST",
        // Retrieved passages are outside content: `untrusted_policy` would hold `remember` after them
        // (test/security/ tests that policy; here the notes are what is tested).
        body: JSON.stringify({ id, name: id, retrieval, tools: ["@memory"], untrusted_policy: "allow" })
      })
      expect(bot.status).toBe(201)
    }
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  const streamed = (body: Record<string, unknown>) => streamedEvents(server, body)
  const lastPrompt = () => JSON.stringify(llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages)
  const question = "How did lighthouse keepers look after the lamps?"

  it("puts the kept passages into the context with their sources and reports them", async () => {
    const events = await streamed({ message: question, bot_id: "librarian", client_id: "rag-on" })
    const rag = events.find((event) => event.type === "rag_rerank")
    expect(rag).toBeDefined()
    expect(events.findIndex((event) => event.type === "rag_rerank")).toBeLessThan(
      events.findIndex((event) => event.type === "assistant_text")
    )
    expect(rag.query).toBe(question)
    expect(rag.reranker).toBe("hybrid")
    expect(rag.candidates.length).toBeGreaterThanOrEqual(2)
    expect(rag.kept).toHaveLength(2)
    expect(rag.kept.map((p: { title: string }) => p.title)).toContain("Lighthouse keeping")
    expect(rag.kept.map((p: { title: string }) => p.title)).not.toContain("Bread baking")
    expect(rag.kept[0]).toMatchObject({ source: "library", document_id: expect.any(String), score: expect.any(Number) })
    expect(rag.duration_ms).toBeGreaterThanOrEqual(0)
    const prompt = lastPrompt()
    expect(prompt).toContain("trimmed the wicks")
    expect(prompt).toContain("source: library")
    expect(prompt).not.toContain("Knead the dough")
    const budget = events.find((event) => event.type === "context_budget")
    expect(budget.retrieval).toBeGreaterThan(10)
    expect(budget.used).toBeGreaterThan(budget.retrieval)
  })

  it("does nothing of it with retrieval off (the default bot)", async () => {
    const events = await streamed({ message: question, client_id: "rag-off" })
    expect(events.some((event) => event.type === "rag_rerank")).toBe(false)
    expect(events.find((event) => event.type === "context_budget").retrieval).toBe(0)
    expect(lastPrompt()).not.toContain("trimmed the wicks")
  })

  it("follows a channel's override over its bot's settings", async () => {
    const channel = await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "reading room", bot_id: "default" }) })
    )
    const patched = await server.request(`/api/v1/channels/${channel.id}`, {
      method: "PATCH",
      body: JSON.stringify({ retrieval: { enabled: true, top_k: 1 } })
    })
    expect(patched.status).toBe(200)
    expect((await json(patched)).retrieval).toEqual({ enabled: true, top_k: 1 })
    const events = await streamed({ message: question, channel_id: channel.id })
    expect(events.find((event) => event.type === "rag_rerank").kept).toHaveLength(1)
    expect(
      (await json(await server.request(`/api/v1/channels/${channel.id}`, { method: "PATCH", body: JSON.stringify({ retrieval: null }) })))
        .retrieval
    ).toBeNull()
    expect((await streamed({ message: question, channel_id: channel.id })).some((event) => event.type === "rag_rerank")).toBe(false)
  })

  it("lets the model rerank the candidates when asked, keeping only those it names", async () => {
    llm.script({ text: "{\"ranked\": [3, 99, 3]}" }, { text: "Answered." })
    const events = await streamed({ message: question, bot_id: "picky", client_id: "rag-llm" })
    const rag = events.find((event) => event.type === "rag_rerank")
    expect(rag.reranker).toBe("llm")
    expect(rag.kept).toEqual([rag.candidates[2]])
    const calls = llm.requestsTo("/v1/chat/completions")
    expect(JSON.stringify(calls.at(-2)!.body.messages)).toContain("You rank search results")
    expect(calls.at(-2)!.body.response_format).toEqual({ type: "json_object" })
    // A reranker that answers no ranking leaves the hybrid order.
    llm.script({ text: "I cannot rank these." }, { text: "Answered." })
    const fallback = (await streamed({ message: question, bot_id: "picky", client_id: "rag-llm-2" })).find((event) =>
      event.type === "rag_rerank"
    )
    expect(fallback.reranker).toBe("hybrid")
    expect(fallback.kept).toHaveLength(2)
  })

  it("keeps nothing below min_score, and adds the bot's own notes up to notes_top_k", async () => {
    const events = await streamed({ message: question, bot_id: "strict", client_id: "rag-strict" })
    expect(events.find((event) => event.type === "rag_rerank").kept).toEqual([])
    expect(lastPrompt()).not.toContain("trimmed the wicks")

    llm.script({ toolCalls: [{ name: "remember", arguments: JSON.stringify({ note: "The user keeps a lighthouse lamp collection" }) }] }, {
      text: "Noted."
    })
    expect(
      (await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "remember that", bot_id: "librarian" }) })).status
    ).toBe(200)
    await streamed({ message: "What about my lighthouse lamp collection?", bot_id: "librarian", client_id: "rag-notes" })
    const prompt = lastPrompt()
    expect(prompt).toContain("Your own notes that may matter here")
    expect(prompt).toContain("lamp collection")
    // Another bot never sees them.
    await streamed({ message: "What about my lighthouse lamp collection?", bot_id: "picky", client_id: "rag-notes-2" })
    expect(lastPrompt()).not.toContain("The user keeps a lighthouse lamp collection")
  })
})
