/**
 * One full collection when the server goes quiet after work, so that the memory a burst took goes
 * back. V8 gives memory back (shrinks its young generation, compacts the old) in memory-reducing
 * collections, and it starts those only some seconds after a full collection. A burst that stays
 * under the old generation's limit makes no full collection, and an idle server allocates too
 * little to reach one: RSS then stayed at the burst's high mark for minutes (bench/README.md,
 * "Memory back after a burst").
 *
 * So every 5 s the server looks at the window behind it. When its event loop was busy under 1 % of
 * it and the heap in use has grown by a fifth since the last collection (the garbage of the work
 * before), it collects once. That collection also sets V8's memory reducer going, which hands the
 * young generation's pages back some seconds later. Under load the loop is never quiet, and an
 * idle server's heap does not grow, so neither pays for it.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { performance, type EventLoopUtilization } from "node:perf_hooks"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { AppConfig } from "../config/AppConfig.ts"

/** How often the server looks back at the window behind it. */
const quietCheckCadence = Schedule.spaced(Duration.seconds(5))

/** A window whose event loop was busy under this share of it is quiet. */
export const quietBelow = 0.01

/** Growth of the heap in use, as a share of what the last collection left, that is worth a collection. */
export const growthToCollect = 0.2

/** Whether to collect after a window: quiet, and grown since the last collection (none yet: grown). */
export const shouldCollect = (window: { readonly busyShare: number; readonly heapUsed: number }, liveAfterLast: number | undefined): boolean =>
  window.busyShare < quietBelow && (liveAfterLast === undefined || window.heapUsed > liveAfterLast * (1 + growthToCollect))

/** What the policy reads and does: the process's own, or a test's. */
export interface HeapProbe {
  /** The share of the time since the last call that the event loop was busy. */
  readonly busyShare: () => number
  readonly heapUsed: () => number
  /** A full, synchronous collection. */
  readonly collect: () => void
}

/**
 * V8's `gc`, without starting node with `--expose-gc` (`npm start` and `cairn serve` start it
 * plainly): the flag, set now, gives it to contexts made after, so a new context hands it over.
 * The main context gets no global `gc`.
 */
const fullCollection = (): (() => void) => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (typeof exposed === "function") return exposed
  v8.setFlagsFromString("--expose-gc")
  return vm.runInNewContext("gc") as () => void
}

/** The process's own event loop and heap. */
export const processProbe = (): HeapProbe => {
  let last: EventLoopUtilization = performance.eventLoopUtilization()
  const collect = fullCollection()
  return {
    busyShare: () => {
      const now = performance.eventLoopUtilization()
      const share = performance.eventLoopUtilization(now, last).utilization
      last = now
      return share
    },
    heapUsed: () => v8.getHeapStatistics().used_heap_size,
    collect
  }
}

const megabytes = (bytes: number) => (bytes / 1048576).toFixed(0)

/** Looks back every 5 s, and collects as `shouldCollect` says, for as long as the scope lasts. */
export const watch = (probe: HeapProbe) =>
  Effect.gen(function* () {
    let liveAfterLast: number | undefined
    const look = Effect.suspend(() => {
      const window = { busyShare: probe.busyShare(), heapUsed: probe.heapUsed() }
      if (!shouldCollect(window, liveAfterLast)) return Effect.void
      const started = performance.now()
      probe.collect()
      liveAfterLast = probe.heapUsed()
      return Effect.logDebug(
        `Collected while quiet: ${megabytes(window.heapUsed)} MB in use, ${megabytes(liveAfterLast)} MB after, in ${(performance.now() - started).toFixed(0)} ms`
      )
    })
    yield* Effect.forkScoped(Effect.repeat(look, quietCheckCadence))
  })

/** The watch on this process, unless QUIET_COLLECTION is off. */
export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (config.quietCollection) yield* watch(processProbe())
  })
)
