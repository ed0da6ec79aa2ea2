/** Context assembly keeps the order providers require, whatever the stored history holds. */
import { describe, expect, it } from "vitest"
import { missingToolResult, repairToolSequence } from "../../src/agent/Context.ts"
import type { ChatMessage } from "../../src/providers/Model.ts"

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
