/**
 * Memory compaction at a small window (CONTEXT_WINDOW 1200, 200 reserved): once the history passes
 * 75% of what is left, the oldest turns become the session's next summary version and the model
 * gets the summary in their place, the newest turns whole; a tool call and its result are never
 * split; passive messages join the summary only with the channel's passive_memory on. The admin
 * route compacts on demand, summarize stores a version too, and versions are listed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compactionCut } from "../../src/agent/Compaction.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const summaryAnswer = (text: string) => JSON.stringify({ title: "Lighthouse talk", summary: text })
const long = (tag: string) => `${tag} ${"the keeper climbed the tower and trimmed the wick again ".repeat(7)}`.trim()

describe("where compaction cuts", () => {
  const row = (seq: number, role: "user" | "assistant" | "tool", content: string, calls = false) => ({
    seq,
    role,
    content,
    tool_calls: calls ? [{ id: `c${seq}`, type: "function", function: { name: "t", arguments: "{}" } }] : null
  })

  it("keeps the newest turns that fit, starting at a user message, and never splits a tool call from its result", () => {
    const rows = [
      row(1, "user", "x".repeat(400)),
      row(2, "assistant", "", true),
      row(3, "tool", "y".repeat(400)),
      row(4, "assistant", "done"),
      row(5, "user", "z".repeat(100)),
      row(6, "assistant", "ok")
    ]
    expect(compactionCut(rows, 60)).toBe(4)
    // Even a budget that would fit the tool result alone cuts only before a user message.
    expect(compactionCut(rows, 180)).toBe(4)
    // Everything fits: still the oldest turn goes (the admin asked to compact), back to a user message.
    expect(compactionCut(rows, 10_000)).toBe(4)
    // The newest user message alone too large: it is kept all the same.
    expect(compactionCut(rows, 1)).toBe(4)
    expect(compactionCut([row(1, "user", "only")], 1)).toBeNull()
  })
})

describe.each(backends)("memory compaction (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: summaryAnswer("SUMMARY-OF-EARLIER-TURNS") } })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-compact",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "0",
        CONTEXT_WINDOW: "1200",
        ANSWER_RESERVE_TOKENS: "200"
      }
    })
    const bot = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "keeper", name: "Keeper", tools: ["current_time"] })
    })
    expect(bot.status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  const post = (path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })
  const channel = async (name: string, passiveMemory: boolean) =>
    (await json(await post("/api/v1/admin/channels", { name, bot_id: "keeper", passive_memory: passiveMemory }))).id as string
  const summarizerCalls = () =>
    llm.requestsTo("/v1/chat/completions").filter((r) => JSON.stringify(r.body.messages[0]).includes("Summarize the conversation"))
  /** Chats on the channel until the session has a summary; answers the session id and the turns it took. */
  const chatUntilCompacted = async (channelId: string) => {
    for (let turn = 1; turn <= 15; turn++) {
      expect((await post("/chat", { message: long(`TURN-${turn}`), channel_id: channelId })).status).toBe(200)
      const sessionId = (await json(await server.request(`/api/v1/channels/${channelId}`))).active_session_id as string
      const versions = await json(await server.request(`/api/v1/admin/sessions/${sessionId}/summaries`))
      if (versions.length > 0) return { sessionId, versions, turn }
    }
    throw new Error("no compaction within 15 turns")
  }

  it("summarises the oldest turns when the history passes the threshold, tool-call pairs intact", async () => {
    const channelId = await channel("tower", false)
    // The first turn calls a tool: its call and result must stay together across the cut.
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "It is night." })
    expect((await post("/chat", { message: long("FIRST-WITH-TOOL"), channel_id: channelId })).status).toBe(200)
    const { versions, turn } = await chatUntilCompacted(channelId)
    expect(turn).toBeGreaterThan(2)
    expect(versions).toEqual([expect.objectContaining({ version: 1, trigger: "compaction", summary: "SUMMARY-OF-EARLIER-TURNS" })])
    expect(summarizerCalls().at(-1)!.body.messages[1].content).toContain("Tool current_time answered")

    // The turn's own call (after the summarizer's): the summary in place of the old turns.
    const turnCall = llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages as Array<any>
    const text = JSON.stringify(turnCall)
    expect(text).toContain("Summary of the conversation so far:\\nSUMMARY-OF-EARLIER-TURNS")
    expect(text).not.toContain("FIRST-WITH-TOOL")
    expect(text).toContain(`TURN-${turn}`)
    const history = turnCall.filter((m) => m.role !== "system")
    expect(history[0].role).toBe("user")
    for (const [index, message] of history.entries()) {
      for (const call of message.tool_calls ?? []) expect(history[index + 1]).toMatchObject({ role: "tool", tool_call_id: call.id })
      if (message.role === "tool") {
        expect(history[index - 1].tool_calls?.some((c: any) => c.id === message.tool_call_id) ?? history[index - 1].role === "tool").toBe(
          true
        )
      }
    }
  })

  it("lets passive messages into the summary only with the channel's passive_memory on", async () => {
    for (const passiveMemory of [false, true]) {
      const channelId = await channel(`room ${passiveMemory}`, passiveMemory)
      expect(
        (await post("/chat", { message: `PASSIVE-FACT-${passiveMemory} the lamp is blue`, channel_id: channelId, passive: true })).status
      ).toBe(200)
      await chatUntilCompacted(channelId)
      const summarized = summarizerCalls().at(-1)!.body.messages[1].content as string
      expect(summarized.includes(`PASSIVE-FACT-${passiveMemory}`), `passive_memory ${passiveMemory}`).toBe(passiveMemory)
      expect(summarized).toContain("TURN-1")
    }
  })

  it("compacts on the admin's request, stores summarize as a version, and lists the versions", async () => {
    const channelId = await channel("log", false)
    for (const turn of [1, 2, 3]) expect((await post("/chat", { message: long(`LOG-${turn}`), channel_id: channelId })).status).toBe(200)
    const sessionId = (await json(await server.request(`/api/v1/channels/${channelId}`))).active_session_id as string
    llm.script({ text: summaryAnswer("ADMIN-SUMMARY") })
    const compacted = await post(`/api/v1/admin/sessions/${sessionId}/compact`, {})
    expect(compacted.status).toBe(200)
    expect(await json(compacted)).toMatchObject({ version: 1, summary: "ADMIN-SUMMARY", trigger: "admin", from_seq: expect.any(Number) })
    llm.script({ text: summaryAnswer("WHOLE-SUMMARY") })
    expect(await json(await post(`/sessions/${sessionId}/summarize`, {}))).toEqual({ title: "Lighthouse talk", summary: "WHOLE-SUMMARY" })
    const versions = await json(await server.request(`/api/v1/admin/sessions/${sessionId}/summaries`))
    expect(versions.map((v: any) => [v.version, v.trigger, v.summary])).toEqual([
      [1, "admin", "ADMIN-SUMMARY"],
      [2, "summarize", "WHOLE-SUMMARY"]
    ])
    expect(versions[1].through_seq).toBeGreaterThan(versions[0].through_seq)
    // Nothing left to compact: everything is summarised.
    const nothing = await post(`/api/v1/admin/sessions/${sessionId}/compact`, {})
    expect(nothing.status).toBe(422)
    expect((await post("/api/v1/admin/sessions/00000000-0000-4000-8000-000000000000/compact", {})).status).toBe(404)
  })
})
