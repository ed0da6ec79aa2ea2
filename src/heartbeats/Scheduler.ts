/**
 * The heartbeat scheduler: one across every server process (the leader of `heartbeats`, see
 * db/Leadership.ts). It fires the heartbeats whose slot has come (moving each to its next slot
 * first, so a slot is taken once) and settles the runs whose task finished. It looks at the next
 * slot, when a task changes or a heartbeat is set (the bus), at most every HEARTBEAT_TICK_MS, and
 * at least every minute.
 * A slot missed while no server ran (older than `missedAfter` when leadership begins) fires once,
 * as `catch_up`, where the heartbeat says so; otherwise the schedule goes on from now.
 */
import { Config, Duration, Effect, Layer } from "effect"
import { Bus } from "../db/Bus.ts"
import { Leadership } from "../db/Leadership.ts"
import { Heartbeats, slotAfter } from "./Heartbeats.ts"
import { HeartbeatsRepo } from "./Repo.ts"

const tickMsConfig = Config.integer("HEARTBEAT_TICK_MS").pipe(Config.withDefault(1000))

/** The longest the scheduler sleeps: a bound for a change the bus did not tell of (a run whose process died before making its task). */
const idleLook = Duration.minutes(1)

/** How late a slot may be at the start of leadership and still count as on time (a takeover, a restart). */
const missedAfterMs = 60_000

export const HeartbeatSchedulerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const heartbeats = yield* Heartbeats
    const repo = yield* HeartbeatsRepo
    const leadership = yield* Leadership
    const bus = yield* Bus
    const tickMs = yield* tickMsConfig

    /** Fires what is due; on the first pass of a leadership, a slot long past is a missed one. */
    const fireDue = (firstPass: boolean) =>
      Effect.gen(function*() {
        const now = new Date()
        for (const row of yield* repo.due(now)) {
          const slot = row.next_at!
          const missed = firstPass && now.getTime() - slot.getTime() > missedAfterMs
          // Fired before the slot moves on: the run's unique slot keeps a second try from firing it
          // again, and a crash in between cannot lose it.
          if (!missed || row.catch_up) {
            yield* heartbeats.fire(row, slot, missed ? "catch_up" : "schedule").pipe(
              Effect.catchAllCause((cause) => Effect.logWarning(`Heartbeat of channel ${row.channel_id} did not fire`, cause))
            )
          }
          yield* repo.advance(row.channel_id, slot, slotAfter(row, now))
        }
      })

    const lead = Effect.gen(function*() {
      let firstPass = true
      const look = Effect.gen(function*() {
        yield* fireDue(firstPass)
        firstPass = false
        yield* heartbeats.settle
        const next = yield* repo.nextSlot
        return Math.min(Duration.toMillis(idleLook), next === undefined ? Infinity : next.getTime() - Date.now())
      }).pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("Heartbeat scheduler tick failed", cause), tickMs)))
      return yield* bus.lookLoop(["task", "heartbeats"], look, tickMs)
    })

    yield* leadership
      .lead("heartbeats", lead, { onFollowing: Effect.void, onLeading: Effect.logDebug("Leading the heartbeat scheduler") })
      .pipe(Effect.forkScoped)
  })
).pipe(Layer.provide(Layer.mergeAll(Heartbeats.Default, HeartbeatsRepo.Default, Leadership.Default, Bus.Default)))
