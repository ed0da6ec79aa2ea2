/**
 * The collection when the server goes quiet (src/lifecycle/QuietCollection.ts): the policy, the
 * watch on Effect's TestClock with a probe the test drives, and the process's own probe, whose
 * collection must really collect on this Node without `--expose-gc`.
 */
import { it as effectIt } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { describe, expect, it } from "vitest"
import { processProbe, shouldCollect, watch, type HeapProbe } from "../../src/lifecycle/QuietCollection.ts"

const MB = 1048576
const quiet = { busyShare: 0.002, busyMs: 10 }

describe("collection when quiet", () => {
  it("collects in a quiet window after a second's work, when V8 holds a fifth more than was live", () => {
    const worked = { workMs: 1500, liveAfterLast: 80 * MB }
    expect(shouldCollect({ ...quiet, heapHeld: 97 * MB }, worked)).toBe(true)
    // Not while busy, however much it holds.
    expect(shouldCollect({ busyShare: 0.2, busyMs: 1000, heapHeld: 300 * MB }, worked)).toBe(false)
    expect(shouldCollect({ busyShare: 0.011, busyMs: 55, heapHeld: 300 * MB }, worked)).toBe(false)
    // Not when it holds little more than was live.
    expect(shouldCollect({ ...quiet, heapHeld: 95 * MB }, worked)).toBe(false)
    // Not after too little work: the window's own counts.
    expect(shouldCollect({ ...quiet, heapHeld: 300 * MB }, { workMs: 900, liveAfterLast: 80 * MB })).toBe(false)
    expect(shouldCollect({ ...quiet, busyMs: 40, heapHeld: 300 * MB }, { workMs: 960, liveAfterLast: 80 * MB })).toBe(true)
    // None yet: the start's work is enough.
    expect(shouldCollect({ ...quiet, heapHeld: 90 * MB }, { workMs: 2000, liveAfterLast: undefined })).toBe(true)
  })

  effectIt.scoped("looks every 5 s: collects once when work ends, not while it lasts nor while idle after", () =>
    Effect.gen(function* () {
      // What the process does in each 5 s window: how busy, and what V8 holds at its end.
      let busyMs = 2500
      let held = 140 * MB
      const live = 85 * MB
      const collections: Array<number> = []
      const probe: HeapProbe = {
        busy: () => ({ share: busyMs / 5000, ms: busyMs }),
        heapHeld: () => held,
        heapUsed: () => live,
        collect: () => void collections.push(held)
      }
      yield* watch(probe)
      const windows = (n: number) => TestClock.adjust(Duration.seconds(5 * n))
      // The start: busy, then quiet: one collection. V8 gives its room back some seconds later.
      yield* Effect.yieldNow()
      yield* windows(1)
      busyMs = 5
      yield* windows(1)
      expect(collections).toEqual([140 * MB])
      // Idle: nothing is collected, though V8 still holds more than was live.
      held = 110 * MB
      yield* windows(30)
      expect(collections).toHaveLength(1)
      // A burst: no collection while it lasts; one in the first quiet window after it.
      busyMs = 3000
      held = 180 * MB
      yield* windows(6)
      expect(collections).toHaveLength(1)
      busyMs = 5
      yield* windows(1)
      expect(collections).toEqual([140 * MB, 180 * MB])
      // Still holding (the memory reducer has not run yet), and idle: no second collection.
      yield* windows(12)
      expect(collections).toHaveLength(2)
      // A few requests now and then (busy under 1 % of each window): never a second's work, never a collection.
      busyMs = 40
      yield* windows(20)
      expect(collections).toHaveLength(2)
    })
  )

  it("collects the process's garbage through its own probe", () => {
    const probe = processProbe()
    let garbage: Array<{ readonly n: number; readonly text: string }> | undefined = Array.from({ length: 400_000 }, (_, n) => ({ n, text: `item ${n}` }))
    const used = probe.heapUsed()
    expect(garbage.length).toBe(400_000)
    expect(probe.heapHeld()).toBeGreaterThanOrEqual(used)
    garbage = undefined
    probe.collect()
    // Some 20 MB of objects went with the collection.
    expect(used - probe.heapUsed()).toBeGreaterThan(10 * MB)
    // The first look covers the time since the process started; the next, the time since.
    const first = probe.busy()
    expect(first.ms).toBeGreaterThan(0)
    expect(probe.busy().ms).toBeLessThan(first.ms)
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined()
  })
})
