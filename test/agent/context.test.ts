/**
 * Context assembly keeps the order providers require, whatever the stored history holds; rows held
 * between turns are sent the same way on every turn, a tool result cut at the limit of that turn,
 * and a voice message heard only in its own turn.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { assemble, missingToolResult, repairToolSequence } from "../../src/agent/Context.ts"
import { BotConfig } from "../../src/bots/Model.ts"
import type { ChatMessage } from "../../src/providers/Model.ts"
import type { HistoryRow } from "../../src/sessions/Repo.ts"

const call = (id: string) => ({ id, type: "function" as const, function: { name: "t", arguments: "{}" } })
const user = (content: string): ChatMessage => ({ role: "user", content })
const asks = (...ids: Array<string>): ChatMessage => ({ role: "assistant", content: null, tool_calls: ids.map(call) })
const result = (id: string, content = `r-${id}`): ChatMessage => ({ role: "tool", content, tool_call_id: id })

describe("repairToolSequence", () => {
  it("leaves a well-formed history as it is", () => {
    const history = [user("q"), asks("a", "b"), result("a"), result("b"), { role: "assistant", content: "done" } as ChatMessage]
    expect(repairToolSequence(history)).toEqual(history)
  })

  it("moves a message stored while a tool ran to after the tool block", () => {
    const history = [user("q"), asks("a"), user("passive, meanwhile"), result("a")]
    expect(repairToolSequence(history)).toEqual([user("q"), asks("a"), result("a"), user("passive, meanwhile")])
  })

  it("stands in for a result that was never stored (cancel mid-tool)", () => {
    const history = [user("q"), asks("a", "b"), result("a"), user("next question")]
    expect(repairToolSequence(history)).toEqual([
      user("q"),
      asks("a", "b"),
      result("a"),
      { role: "tool", content: missingToolResult, tool_call_id: "b" },
      user("next question")
    ])
  })

  it("drops a tool result without its call", () => {
    expect(repairToolSequence([user("q"), result("ghost"), { role: "assistant", content: "x" }])).toEqual([
      user("q"),
      { role: "assistant", content: "x" }
    ])
  })
})

describe("assemble, turn after turn on the same held rows", () => {
  const bot = {
    ...Schema.decodeUnknownSync(BotConfig)({ id: "b", name: "B", system_prompt: "Be brief." }),
    source: "api",
    created_at: new Date(),
    updated_at: new Date()
  } as any
  const row = (fields: Partial<HistoryRow> & Pick<HistoryRow, "role" | "content">): HistoryRow => ({
    tool_calls: null,
    tool_call_id: null,
    cancelled: false,
    ...fields
  })
  const voice = { type: "audio", mime_type: "audio/wav", name: "note.wav", data: "UklGRg==", for_model: true }
  const asked = row({ role: "user", content: "Look it up" })
  const calls = row({ role: "assistant", content: null, tool_calls: [call("t1")] })
  const found = row({ role: "tool", content: "x".repeat(50), tool_call_id: "t1" })
  const spoken = row({ role: "user", content: "What did I say?", attachments: [voice] })
  const turn = (history: ReadonlyArray<HistoryRow>, toolResultLimit: number) =>
    assemble({ bot, model: "m", history, skills: [], reserve: 0, toolResultLimit }).messages

  it("sends a held row the same way each turn, and cuts a tool result at each turn's own limit", () => {
    const first = turn([asked, calls, found], 1000)
    expect(turn([asked, calls, found], 1000)).toEqual(first)
    expect(first[3]).toEqual({ role: "tool", content: "x".repeat(50), tool_call_id: "t1" })
    const cut = turn([asked, calls, found], 10)[3]!
    expect(cut.content).toMatch(/^x{10}\n\[Tool result cut for the model: 50 characters/)
    expect(turn([asked, calls, found], 1000)[3]).toEqual(first[3])
  })

  it("hears a voice message in its own turn only", () => {
    const own = turn([spoken], 1000)[1]!
    expect(own.content).toEqual([{ type: "text", text: "What did I say?" }, {
      type: "input_audio",
      input_audio: { data: "UklGRg==", format: "wav" }
    }])
    const later = turn([spoken, row({ role: "assistant", content: "You asked." }), row({ role: "user", content: "And now?" })], 1000)[1]!
    expect(later.content).toBe("What did I say?")
    expect(turn([spoken], 1000)[1]).toEqual(own)
  })
})
