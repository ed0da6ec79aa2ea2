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

describe("collection when quiet", () => {
  it("collects after a quiet window once the heap has grown by a fifth, never while busy", () => {
    expect(shouldCollect({ busyShare: 0.001, heapUsed: 90 * MB }, undefined)).toBe(true)
    expect(shouldCollect({ busyShare: 0.2, heapUsed: 300 * MB }, 80 * MB)).toBe(false)
    expect(shouldCollect({ busyShare: 0.011, heapUsed: 300 * MB }, 80 * MB)).toBe(false)
    expect(shouldCollect({ busyShare: 0.009, heapUsed: 97 * MB }, 80 * MB)).toBe(true)
    expect(shouldCollect({ busyShare: 0.009, heapUsed: 95 * MB }, 80 * MB)).toBe(false)
    expect(shouldCollect({ busyShare: 0, heapUsed: 80 * MB }, 80 * MB)).toBe(false)
  })

  effectIt.scoped("looks every 5 s: collects once when a burst ends, not while it lasts nor while idle after", () =>
    Effect.gen(function* () {
      // What the test's process does in each 5 s window: busy share and heap in use at its end.
      let busy = 0.5
      let heap = 80 * MB
      const collections: Array<number> = []
      const probe: HeapProbe = {
        busyShare: () => busy,
        heapUsed: () => heap,
        collect: () => {
          collections.push(heap)
          heap = 82 * MB
        }
      }
      yield* watch(probe)
      const windows = (n: number) => TestClock.adjust(Duration.seconds(5 * n))
      // Start-up: busy, then quiet with its garbage: one collection.
      yield* Effect.yieldNow()
      yield* windows(2)
      busy = 0.001
      yield* windows(1)
      expect(collections).toEqual([80 * MB])
      // Idle: nothing grows, nothing is collected.
      yield* windows(20)
      expect(collections).toHaveLength(1)
      // A burst: the heap grows while the loop is busy; no collection until it is quiet.
      busy = 0.6
      for (let i = 0; i < 6; i++) {
        heap += 40 * MB
        yield* windows(1)
      }
      expect(collections).toHaveLength(1)
      busy = 0.002
      yield* windows(1)
      expect(collections).toEqual([80 * MB, 322 * MB])
      yield* windows(12)
      expect(collections).toHaveLength(2)
      // A few requests: little growth, busy under 1 % of a window: no collection.
      heap += 5 * MB
      yield* windows(6)
      expect(collections).toHaveLength(2)
    })
  )

  it("collects the process's garbage through its own probe", () => {
    const probe = processProbe()
    let garbage: Array<{ readonly n: number; readonly text: string }> | undefined = Array.from({ length: 400_000 }, (_, n) => ({ n, text: `item ${n}` }))
    const held = probe.heapUsed()
    expect(garbage.length).toBe(400_000)
    garbage = undefined
    probe.collect()
    // Some 20 MB of objects went with the collection.
    expect(held - probe.heapUsed()).toBeGreaterThan(10 * MB)
    expect(probe.busyShare()).toBeGreaterThanOrEqual(0)
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined()
  })
})
