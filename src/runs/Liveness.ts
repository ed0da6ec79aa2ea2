/**
 * Which runs are still alive, across processes. This process heartbeats its own runs: one another
 * process took over stops here, and a cancel asked of another process reaches it. A run whose
 * process is gone (a crash on this host, a heartbeat stopped anywhere) is closed, so its session
 * takes the next message.
 */
import { Duration, Effect, Schedule, Stream } from "effect"
import { Bus } from "../db/Bus.ts"
import type { LiveRun } from "./LiveRun.ts"
import { ownerGone } from "./Owners.ts"
import { heartbeatEverySeconds, missedHeartbeatsSeconds, RunsRepo } from "./Repo.ts"

/** A run that stopped heartbeating this long ago lost its process; its lock is taken over. */
export const staleAfter = Duration.seconds(30)
const heartbeatEvery = Duration.seconds(heartbeatEverySeconds)
/** What a run closed for a process that stopped says to its readers. */
export const interruptedMessage = "The server running this session stopped before the run finished"

/**
 * At start, the runs of a process on this host that is gone (a crash, a kill) end now, with
 * `error` and `response` in their log, so their sessions take the next message at once. Runs of
 * any process whose heartbeat stopped (another host, a hung process) are closed as they go stale,
 * not left running until a message to their session happens to take them over.
 */
export const closeDeadRuns = (owner: string) =>
  Effect.gen(function*() {
    const repo = yield* RunsRepo
    const orphaned = (yield* repo.runningOwners).filter((holder) => ownerGone(holder, owner))
    if (orphaned.length > 0) {
      const closed = yield* repo.closeRuns({ owners: orphaned }, interruptedMessage)
      if (closed > 0) yield* Effect.logWarning(`Closed ${closed} run(s) of a server process that stopped without finishing them`)
    }
    yield* Effect.forkScoped(
      repo.closeRuns({ staleSeconds: Duration.toSeconds(staleAfter) }, interruptedMessage).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Closing stale runs failed", cause)),
        // As often as a dead holder can be told (Repo.ts `gone`): its runs' streams end soon after.
        Effect.repeat(Schedule.spaced(Duration.seconds(missedHeartbeatsSeconds)))
      )
    )
  })

/** The runs of this process, as the heartbeat and a cancel notice see them. */
export interface LocalRuns {
  /** The runs here not yet finished. */
  readonly running: () => ReadonlyArray<LiveRun>
  /** The session's run here not yet finished, if any. */
  readonly runOf: (sessionId: string) => LiveRun | undefined
  /** Stops a run here: asked to (a cancel), or its lock taken over by another process. */
  readonly stop: (run: LiveRun, reason: "cancel" | "lost_lock") => Effect.Effect<void>
}

/** Keeps this process's runs alive and notices a lost lock or a cancel asked of another process. */
export const watchRuns = (local: LocalRuns) =>
  Effect.gen(function*() {
    const repo = yield* RunsRepo
    const bus = yield* Bus
    yield* Effect.forkScoped(
      Effect.gen(function*() {
        // Only runs alive in this process keep their lock; an orphaned row (its run never started)
        // goes stale and is taken over.
        const mine = local.running()
        if (mine.length === 0) return
        const kept = yield* repo.heartbeat(mine.map((run) => run.id))
        const still = new Map(kept.map((row) => [row.id, row.cancel_requested]))
        for (const run of mine) {
          // Its end was written while the heartbeat was on its way: not a lost lock.
          if (run.finished) continue
          // Another process took the lock over (this one looked dead): stop, so two runs never share a session.
          if (!still.has(run.id)) yield* local.stop(run, "lost_lock")
          else if (still.get(run.id)) yield* local.stop(run, "cancel")
        }
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Run heartbeat failed", cause)),
        Effect.repeat(Schedule.spaced(heartbeatEvery))
      )
    )

    // A cancel asked of another process reaches a run here at once (the heartbeat's read of the
    // flag is the safety net): the notice names the session, the flag in the database decides.
    yield* Effect.forkScoped(
      bus.changes("run_cancel").pipe(
        Stream.runForEach((sessionId) =>
          Effect.gen(function*() {
            const run = local.runOf(sessionId)
            if (!run) return
            const [row] = yield* repo.heartbeat([run.id])
            if (row?.cancel_requested) yield* local.stop(run, "cancel")
          }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Reading a cancel request failed", cause)))
        )
      )
    )
  })
