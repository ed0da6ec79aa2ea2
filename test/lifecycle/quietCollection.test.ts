/**
 * The collection when the server goes quiet (src/lifecycle/QuietCollection.ts): the policy, the
 * watch on Effect's TestClock with a probe the test drives, and the process's own probe, whose
 * collection must really collect on this Node without `--expose-gc`.
 */
import { it as effectIt } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { describe, expect, it } from "vitest"
import { type HeapProbe, processProbe, shouldCollect, watch } from "../../src/lifecycle/QuietCollection.ts"

const MB = 1048576

describe("collection when quiet", () => {
  it("collects in a quiet window once the server worked a second since the last collection", () => {
    expect(shouldCollect({ share: 0.002, ms: 10 }, 1500)).toBe(true)
    // Not while busy, however long the work.
    expect(shouldCollect({ share: 0.2, ms: 1000 }, 5000)).toBe(false)
    expect(shouldCollect({ share: 0.011, ms: 55 }, 5000)).toBe(false)
    // Not after too little work: the window's own counts.
    expect(shouldCollect({ share: 0.002, ms: 10 }, 900)).toBe(false)
    expect(shouldCollect({ share: 0.008, ms: 40 }, 960)).toBe(true)
  })

  effectIt.scoped("looks every 5 s: collects once when work ends, not while it lasts nor while idle after", () =>
    Effect.gen(function*() {
      // What the process does in each 5 s window: how busy, and its heap in use at its end (for the log).
      let busyMs = 2500
      let heap = 140 * MB
      const collections: Array<number> = []
      const probe: HeapProbe = {
        busy: () => ({ share: busyMs / 5000, ms: busyMs }),
        heapUsed: () => heap,
        collect: () => void collections.push(heap)
      }
      yield* watch(probe)
      const windows = (n: number) => TestClock.adjust(Duration.seconds(5 * n))
      // The start: busy, then quiet: one collection. V8 gives its room back some seconds later.
      yield* Effect.yieldNow()
      yield* windows(1)
      busyMs = 5
      yield* windows(1)
      expect(collections).toEqual([140 * MB])
      // Idle: nothing is collected, whatever the heap.
      heap = 110 * MB
      yield* windows(30)
      expect(collections).toHaveLength(1)
      // A burst: no collection while it lasts; one in the first quiet window after it.
      busyMs = 3000
      heap = 180 * MB
      yield* windows(6)
      expect(collections).toHaveLength(1)
      busyMs = 5
      yield* windows(1)
      expect(collections).toEqual([140 * MB, 180 * MB])
      // Idle after it: no second collection.
      yield* windows(12)
      expect(collections).toHaveLength(2)
      // A request now and then (busy under 1 % of each window): a collection once they add up to a
      // second's work with the idle windows' 60 ms.
      busyMs = 40
      yield* windows(23)
      expect(collections).toHaveLength(2)
      yield* windows(1)
      expect(collections).toHaveLength(3)
    }))

  it("collects the process's garbage through its own probe", () => {
    const probe = processProbe()
    const garbage: Array<{ readonly n: number; readonly text: string }> = Array.from(
      { length: 400_000 },
      (_, n) => ({ n, text: `item ${n}` })
    )
    const used = probe.heapUsed()
    expect(garbage.length).toBe(400_000)
    // Dropped, so the collection can take it.
    garbage.length = 0
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
