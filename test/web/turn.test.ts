/** The answer reducer: a call waiting for approval is one card, whichever of its events comes first. */
import { describe, expect, it } from "vitest"
import type { AgentEvent } from "../../src/agent/Events.ts"
import { applyEvent, emptyTurn, type Turn } from "../../src/web/shared/turn.ts"

const play = (events: ReadonlyArray<unknown>): Turn =>
  events.reduce<Turn>((turn, event) => applyEvent(turn, event as AgentEvent), emptyTurn)

const start = { type: "tool_start", tool: "current_time", name: "current_time", args: {}, tool_call_id: "call_1" }
const request = {
  type: "approval_request",
  request_id: "a1",
  approval_id: "a1",
  tool_name: "current_time",
  tool: "current_time",
  arguments: {}
}
const resolved = {
  type: "approval_resolved",
  request_id: "a1",
  approval_id: "a1",
  approved: true,
  tool: "current_time",
  verdict: "approved"
}
const result = {
  type: "tool_result",
  tool: "current_time",
  name: "current_time",
  result: "{\"time\":\"now\"}",
  duration_ms: 3,
  tool_call_id: "call_1"
}

describe("a tool call waiting for approval", () => {
  it("shows once when tool_start comes before approval_request (the agent's order)", () => {
    const waiting = play([start, request])
    expect(waiting.parts).toHaveLength(1)
    expect(waiting.parts[0]).toMatchObject({ kind: "tool", id: "call_1", approval: { id: "a1", state: "pending" } })
    const done = play([start, request, resolved, result])
    expect(done.parts).toHaveLength(1)
    expect(done.parts[0]).toMatchObject({ id: "call_1", approval: { state: "approved" }, result: "{\"time\":\"now\"}" })
  })

  it("shows once when approval_request comes first (a replay)", () => {
    const done = play([request, resolved, start, result])
    expect(done.parts).toHaveLength(1)
    expect(done.parts[0]).toMatchObject({ id: "call_1", approval: { state: "approved" }, result: "{\"time\":\"now\"}" })
  })

  it("keeps two calls of the same tool apart", () => {
    const second = { ...start, tool_call_id: "call_2" }
    const turn = play([start, result, second, request])
    expect(turn.parts).toHaveLength(2)
    expect(turn.parts[0]).not.toHaveProperty("approval")
    expect(turn.parts[1]).toMatchObject({ id: "call_2", approval: { state: "pending" } })
  })
})
