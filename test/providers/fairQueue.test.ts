/** The provider slots' waiting line (pure): served round-robin across callers, FIFO within one. */
import { describe, expect, it } from "vitest"
import { FairQueue } from "../../src/providers/FairQueue.ts"

const drain = <W>(queue: FairQueue<W>) => {
  const out: Array<W> = []
  for (let next = queue.next(); next !== undefined; next = queue.next()) out.push(next)
  return out
}

describe("FairQueue", () => {
  it("serves callers in turn, each caller's calls in their order", () => {
    const queue = new FairQueue<string>()
    for (let i = 1; i <= 5; i++) queue.push("a", `a${i}`)
    queue.push("b", "b1")
    queue.push("c", "c1")
    queue.push("c", "c2")
    expect(queue.size).toBe(8)
    expect(drain(queue)).toEqual(["a1", "b1", "c1", "a2", "c2", "a3", "a4", "a5"])
    expect(queue.size).toBe(0)
    expect(queue.next()).toBeUndefined()
  })

  it("serves a caller that had nothing waiting at the next slot, however much another caller has piled up", () => {
    const queue = new FairQueue<string>()
    for (let i = 1; i <= 300; i++) queue.push("busy", `busy${i}`)
    expect(queue.next()).toBe("busy1")
    queue.push("other", "mine")
    expect(queue.next()).toBe("mine")
    expect(queue.next()).toBe("busy2")
    // Newcomers keep their order among themselves; then the turn goes on.
    queue.push("x", "x1")
    queue.push("y", "y1")
    queue.push("x", "x2")
    expect([queue.next(), queue.next(), queue.next(), queue.next(), queue.next()]).toEqual(["x1", "y1", "busy3", "x2", "busy4"])
    expect(queue.size).toBe(296)
  })

  it("alternates two callers that both keep calls waiting", () => {
    const queue = new FairQueue<string>()
    for (let i = 1; i <= 3; i++) queue.push("a", `a${i}`)
    for (let i = 1; i <= 3; i++) queue.push("b", `b${i}`)
    expect(drain(queue)).toEqual(["a1", "b1", "a2", "b2", "a3", "b3"])
  })

  it("takes out a waiter that gave up, and answers whether it was still waiting", () => {
    const queue = new FairQueue<string>()
    queue.push("a", "a1")
    queue.push("a", "a2")
    queue.push("b", "b1")
    expect(queue.remove("a", "a1")).toBe(true)
    expect(queue.remove("a", "a1")).toBe(false)
    expect(queue.remove("b", "b1")).toBe(true)
    expect(queue.remove("nobody", "x")).toBe(false)
    expect(queue.size).toBe(1)
    // A lane emptied by removals leaves the turn: b comes back as a newcomer.
    queue.push("b", "b2")
    expect(drain(queue)).toEqual(["a2", "b2"])
  })
})
