/**
 * One full collection when the server goes quiet after work, so that the memory a burst took goes
 * back. V8 gives memory back (shrinks its young generation, compacts the old) in memory-reducing
 * collections, and it starts those only some seconds after a full collection. A burst that stays
 * under the old generation's limit makes no full collection, and an idle server allocates too
 * little to reach one: RSS then stayed at the burst's high mark for minutes (bench/README.md,
 * "Memory back after a burst").
 *
 * So every 5 s the server looks at the window behind it, and collects once when the event loop was
 * busy under 1 % of the window and the server worked a second or more since its last collection.
 * That collection also sets V8's memory reducer going, which hands the young generation's pages back
 * some seconds later. Under load the loop is never quiet, and an idle server does no work, so
 * neither pays for it; a collection (some 50–100 ms) costs a tenth of the work before it at most.
 * The heap is no guide to when: what was live at the last collection (streams open, say) may be
 * gone, and by a quiet moment the scavenges have taken the garbage in use while V8 still holds the
 * room it grew into.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { type EventLoopUtilization, performance } from "node:perf_hooks"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { AppConfig } from "../config/AppConfig.ts"

/** How often the server looks back at the window behind it. */
const quietCheckCadence = Schedule.spaced(Duration.seconds(5))

/** A window whose event loop was busy under this share of it is quiet. */
const quietBelow = 0.01

/** The event loop's busy time since the last collection that is worth one (a collection takes some 50–100 ms). */
const workToCollect = 1000

/** A window behind the server: how busy its event loop was, as a share of it and in milliseconds. */
export interface Window {
  readonly share: number
  readonly ms: number
}

/** Whether to collect after a window: it was quiet, and the server worked a second or more since the last collection (its work before the window included). */
export const shouldCollect = (window: Window, workBeforeMs: number): boolean =>
  window.share < quietBelow && workBeforeMs + window.ms >= workToCollect

/** What the policy reads and does: the process's own, or a test's. */
export interface HeapProbe {
  /** How busy the event loop was since the last call (since the process started, on the first). */
  readonly busy: () => Window
  /** The heap in use, for the log. */
  readonly heapUsed: () => number
  /** A full, synchronous collection. */
  readonly collect: () => void
}

/**
 * V8's `gc`, without starting node with `--expose-gc` (`npm start` and `cairn serve` start it
 * plainly): the flag, set now, gives it to contexts made after, so a new context hands it over.
 * The main context gets no global `gc`.
 */
const fullCollection = (): () => void => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (typeof exposed === "function") return exposed
  v8.setFlagsFromString("--expose-gc")
  return vm.runInNewContext("gc") as () => void
}

/** The process's own event loop and heap. */
export const processProbe = (): HeapProbe => {
  let last: EventLoopUtilization | undefined
  const collect = fullCollection()
  return {
    busy: () => {
      const now = performance.eventLoopUtilization()
      const window = last === undefined ? now : performance.eventLoopUtilization(now, last)
      last = now
      return { share: window.utilization, ms: window.active }
    },
    heapUsed: () => v8.getHeapStatistics().used_heap_size,
    collect
  }
}

const megabytes = (bytes: number) => (bytes / 1048576).toFixed(0)

/** Looks back every 5 s, and collects as `shouldCollect` says, for as long as the scope lasts. */
export const watch = (probe: HeapProbe) =>
  Effect.gen(function*() {
    let workMs = 0
    const look = Effect.suspend(() => {
      const window = probe.busy()
      if (!shouldCollect(window, workMs)) {
        workMs += window.ms
        return Effect.void
      }
      const before = probe.heapUsed()
      const started = performance.now()
      probe.collect()
      workMs = 0
      return Effect.logDebug(
        `Collected while quiet: ${megabytes(before)} MB of heap in use, ${megabytes(probe.heapUsed())} MB after, in ${
          (performance.now() - started).toFixed(0)
        } ms`
      )
    })
    yield* Effect.forkScoped(Effect.repeat(look, quietCheckCadence))
  })

/** The watch on this process, unless QUIET_COLLECTION is off. */
export const layer = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (config.quietCollection) yield* watch(processProbe())
  })
)
