/**
 * A running run's events written to `run_events` behind it, so readers in other processes (told by
 * the bus) see them while it runs. Only runs whose events have waited `flushEvery` are written: most
 * turns end sooner, and their end writes their events in its own statement.
 */
import { Duration, Effect } from "effect"
import { type SequencedEvent, toStored } from "../agent/Events.ts"
import { Bus } from "../db/Bus.ts"
import { writeBehind } from "../db/WriteBehind.ts"
import type { LiveRun } from "./LiveRun.ts"
import { RunsRepo } from "./Repo.ts"

/**
 * A running run's events are written once the oldest unwritten one is this old (so within one to
 * two of these after it is emitted): a run shorter than that writes them only with its end.
 */
const flushEvery = Duration.millis(150)

/** An event as the log stores it. */
export const storedRow = (item: SequencedEvent) => ({ seq: item.seq, event: toStored(item.event) })

/** `owner`: this process, whose runs' events are written only while they are its own (runs/Repo.ts). */
export const eventWrites = (owner: string) =>
  Effect.gen(function*() {
    const repo = yield* RunsRepo
    const bus = yield* Bus
    // The runs with events to write: the flush visits these, not every run kept in memory (a
    // finished run lingers `keepFinished`, thousands of them at a few hundred turns a second).
    const unwritten = new Set<LiveRun>()

    /**
     * Writes the run's unwritten events while it runs (committed relaxed by the statement itself:
     * replay data, not the turn itself); answers whether it wrote any, so readers in other
     * processes can be told (one notice a cycle).
     */
    const flush = (run: LiveRun) =>
      Effect.suspend(() => {
        if (run.unflushed.length === 0 || run.finished) return Effect.succeed(false)
        const batch = run.unflushed.splice(0, run.unflushed.length)
        return repo.appendEvents(run.id, owner, batch.map(storedRow)).pipe(
          Effect.as(true),
          // Put the batch back, due at once, so the next flush retries it (a database failure is a defect).
          Effect.onError(() => Effect.sync(() => (run.unflushed.unshift(...batch), (run.unflushedSince = 0), unwritten.add(run))))
        )
      }).pipe((effect) => run.writing.withPermits(1)(effect))

    // Writes the runs that are due, telling readers elsewhere.
    const writes = yield* writeBehind(
      flushEvery,
      Effect.suspend(() => {
        const due: Array<LiveRun> = []
        const cutoff = Date.now() - Duration.toMillis(flushEvery)
        for (const run of unwritten) {
          if (run.unflushedSince > cutoff) continue
          due.push(run)
          unwritten.delete(run)
        }
        return Effect.forEach(due, (run) => flush(run)).pipe(
          Effect.flatMap((wrote) => bus.publishAll("run_events", due.filter((_, i) => wrote[i]).map((run) => run.id)))
        )
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Run event flush failed; will retry", cause)),
        // Runs not yet due, or a failed batch put back: another round.
        Effect.zipRight(Effect.sync(() => unwritten.size > 0))
      )
    )

    return {
      /** The run has emitted events not yet written. */
      pending: (run: LiveRun) => {
        unwritten.add(run)
        writes.wake()
      },
      /** The run's end has written its events (or given up on them): nothing left to flush. */
      ended: (run: LiveRun) => void unwritten.delete(run)
    } as const
  })
