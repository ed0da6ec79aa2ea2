/** Include resolution, directly: flattening, order, repeats, missing ids, cycles. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { type CarapaceNode, resolveIncludes } from "../../src/carapaces/Resolve.ts"

const node = (id: string, tools: Array<string>, skills: Array<string>, includes: Array<string> = []): CarapaceNode => ({
  id,
  tools,
  skills,
  includes
})
const graphOf = (...nodes: Array<CarapaceNode>) => new Map(nodes.map((n) => [n.id, n]))

describe("resolveIncludes", () => {
  it("flattens includes depth first, own tools before included ones, each once", () => {
    const graph = graphOf(
      node("feeds", ["query_feed_store", "check_mailbox_status"], ["integrations/mailbox/feeds"], ["mission-control", "basics"]),
      node("mission-control", ["list_tasks"], ["mission"], ["basics"]),
      node("basics", ["current_time", "list_tasks"], ["concise-answers"])
    )
    expect(resolveIncludes(graph, ["feeds"])).toEqual(
      Either.right({
        carapaces: ["feeds", "mission-control", "basics"],
        tools: ["query_feed_store", "check_mailbox_status", "list_tasks", "current_time"],
        skills: ["integrations/mailbox/feeds", "mission", "concise-answers"],
        missing: []
      })
    )
  })

  it("reports ids it does not know, and goes on", () => {
    const graph = graphOf(node("a", ["t"], [], ["ghost"]))
    expect(resolveIncludes(graph, ["a", "phantom"])).toEqual(
      Either.right({ carapaces: ["a"], tools: ["t"], skills: [], missing: ["ghost", "phantom"] })
    )
  })

  it("accepts a diamond (shared include) as no cycle", () => {
    const graph = graphOf(
      node("top", [], [], ["left", "right"]),
      node("left", ["l"], [], ["base"]),
      node("right", ["r"], [], ["base"]),
      node("base", ["b"], [])
    )
    expect(Either.isRight(resolveIncludes(graph, ["top"]))).toBe(true)
  })

  it.each([
    [graphOf(node("a", [], [], ["a"])), ["a"], ["a", "a"]],
    [graphOf(node("a", [], [], ["b"]), node("b", [], [], ["a"])), ["a"], ["a", "b", "a"]],
    [graphOf(node("x", [], [], ["a"]), node("a", [], [], ["b"]), node("b", [], [], ["c"]), node("c", [], [], ["a"])), ["x"], [
      "a",
      "b",
      "c",
      "a"
    ]]
  ])("names the cycle %#", (graph, roots, cycle) => {
    const resolved = resolveIncludes(graph, roots)
    expect(Either.isLeft(resolved)).toBe(true)
    if (Either.isLeft(resolved)) {
      expect(resolved.left.cycle).toEqual(cycle)
      expect(resolved.left.message).toBe(`Carapace include cycle: ${cycle.join(" -> ")}`)
    }
  })
})
