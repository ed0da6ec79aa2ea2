/**
 * Finished runs kept in memory `keepFinished` for a quick rejoin (the database keeps them anyway),
 * then dropped by one timer: a queue in the order they finished (so in the order they expire), not
 * a fiber each (thousands at a few hundred turns a second, each kept alive for `keepFinished`, cost
 * the garbage collector).
 */
import { Duration, Effect } from "effect"

/**
 * How long a finished run stays in memory for a quick rejoin (the database keeps it anyway): long
 * enough for a client's reconnect. At a few hundred turns a second each second kept is hundreds of
 * runs in the old generation, marked again by every full collection (a minute kept some 15,000).
 */
export const keepFinished = Duration.seconds(10)

/** `drop` is called with each finished run's id `keepFinished` after `keep` was; the timer goes with the scope. */
export const finishedRuns = (drop: (id: string) => void) =>
  Effect.gen(function*() {
    const expiring: Array<{ readonly id: string; readonly at: number }> = []
    let expiringHead = 0
    let sweepTimer: ReturnType<typeof setTimeout> | undefined
    const sweep = () => {
      sweepTimer = undefined
      const now = Date.now()
      while (expiringHead < expiring.length && expiring[expiringHead]!.at <= now) drop(expiring[expiringHead++]!.id)
      if (expiringHead === expiring.length) {
        expiring.length = 0
        expiringHead = 0
      } else if (expiringHead > 1024) {
        expiring.splice(0, expiringHead)
        expiringHead = 0
      }
      scheduleSweep()
    }
    const scheduleSweep = () => {
      if (sweepTimer !== undefined || expiringHead === expiring.length) return
      // At most once a second: runs that finished within it go together.
      sweepTimer = setTimeout(sweep, Math.max(1000, expiring[expiringHead]!.at - Date.now()))
      sweepTimer.unref()
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => clearTimeout(sweepTimer)))
    return {
      /** The run has finished: dropped `keepFinished` from now. */
      keep: (id: string) => {
        expiring.push({ id, at: Date.now() + Duration.toMillis(keepFinished) })
        scheduleSweep()
      }
    } as const
  })
