/**
 * Agent runs: one at a time per session, locked in the database (a partial unique index on
 * `runs`), so the lock holds across server processes. A run lives in its own fiber, supervised by
 * this service, so a client that disconnects does not stop it. Its events are numbered, kept in
 * memory while it runs here (`LiveRun.ts`), and written to `run_events` in small batches
 * (`EventWrites.ts`), so a client can rejoin a live or finished run (`StoredEvents.ts`) and get what
 * it missed, with no gap and no duplicate.
 */
import { Cause, Context, Deferred, Duration, Effect, Exit, FiberMap, FiberRef, Option, Schedule, Stream, Tracer } from "effect"
import { randomUUID } from "node:crypto"
import { type RunSlot, RunSlots } from "../access/RunSlots.ts"
import type { AgentEvent, SequencedEvent } from "../agent/Events.ts"
import type { TurnResult } from "../agent/Turn.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Bus } from "../db/Bus.ts"
import type { GatedWrites } from "../db/Commit.ts"
import { ShutdownSignal } from "../lifecycle/Shutdown.ts"
import { traced } from "../telemetry/Spans.ts"
import { eventWrites, storedRow } from "./EventWrites.ts"
import { finishedRuns } from "./FinishedRuns.ts"
import { closeDeadRuns, staleAfter, watchRuns } from "./Liveness.ts"
import { attach, type LiveRun, makeLiveRun, numberClosing, record } from "./LiveRun.ts"
import { budgetRefusal, runFailureCode, runFailureMessage, type RunOutcome } from "./Outcome.ts"
import { makeOwner, releaseOwner } from "./Owners.ts"
import { RunsRepo } from "./Repo.ts"
import type { EventSource } from "./Sse.ts"
import { storedEvents } from "./StoredEvents.ts"

// Named here for the callers that know the run engine by this module.
export { keepFinished } from "./FinishedRuns.ts"
export { staleAfter } from "./Liveness.ts"
export { runFailureMessage, type RunOutcome } from "./Outcome.ts"

/** Recording the end of a run, once its first attempt failed: tried again and retried twice (four attempts in all) before it is only logged. */
const endRetries = Schedule.recurs(2)

/** What a run says when another process closed it under it (its heartbeat had stopped). */
const lostLockMessage = "Another server process took this session over; the run stopped"

/** A run's last events when it did not answer: `error`, then `response` with what it had. */
const stoppedEnd = (message: string, text: string, sessionId: string, code: { readonly code?: string } = {}): Array<AgentEvent> => [
  { type: "error", message, ...code },
  { type: "response", text, tools_used: [], client_actions: [], session_id: sessionId }
]

/**
 * Records a run's end (`RunsRepo.end`); whether it ended the run (false: fenced out). A database
 * failure is retried (a defect, so sandboxed for the retry; the schedule is set up only after a
 * first failure: every turn ends a run). A retry that finds the run ended cannot tell another
 * process's close from its own first attempt, committed with its reply lost: that end is taken as
 * recorded (a task's own lease still fences its completion). One given up on is logged.
 */
const endOnce = (end: Effect.Effect<boolean>) =>
  end.pipe(
    Effect.catchAllCause(() =>
      Effect.sandbox(end).pipe(
        Effect.retry(endRetries),
        Effect.as(true),
        Effect.catchAll((cause) => Effect.as(Effect.logError("Could not record the end of a run", cause), true))
      )
    )
  )

/**
 * What a run stopped at the grace's end has to write its end and send its last events, before
 * connections are cut: a quarter of the grace, at least half a second. A fixed half second was
 * too little on a busy machine: the cut came first, and the stream ended without its `response`.
 */
const finalEventsMs = (shutdownGraceMs: number) => Math.max(500, Math.floor(shutdownGraceMs / 4))

export class Runs extends Effect.Service<Runs>()("cairn/Runs", {
  scoped: Effect.gen(function*() {
    const repo = yield* RunsRepo
    const bus = yield* Bus
    const owner = makeOwner()
    yield* Effect.addFinalizer(() => Effect.sync(() => releaseOwner(owner)))
    const live = new Map<string, LiveRun>()
    const expiry = yield* finishedRuns((id) => live.delete(id))
    const fibers = yield* FiberMap.make<string>()
    const quota = yield* RunSlots

    // Background: close the runs of processes gone, write events out, keep this process's runs
    // alive, notice remote cancels.
    yield* closeDeadRuns(owner)
    const flusher = yield* eventWrites(owner)
    const runOf = (sessionId: string) => [...live.values()].find((run) => run.sessionId === sessionId && !run.finished)
    const stopLocal = (run: LiveRun, reason: "cancel" | "lost_lock") =>
      Effect.gen(function*() {
        if (reason === "cancel") run.cancelRequested = true
        else run.lostLock = true
        yield* FiberMap.remove(fibers, run.id)
      })
    yield* watchRuns({ running: () => [...live.values()].filter((run) => !run.finished), runOf, stop: stopLocal })

    // At shutdown the runs under way get the grace to finish (a drained host finishes what it
    // took); a run still going then stops and ends its stream with `error` then `response`, before
    // the server cuts the connections still open at the grace's end (http/Server.ts).
    const shutdown = yield* ShutdownSignal
    const { shutdownGraceMs } = yield* AppConfig
    const runsGrace = Duration.millis(Math.max(0, shutdownGraceMs - finalEventsMs(shutdownGraceMs)))
    yield* Effect.forkScoped(
      Deferred.await(shutdown).pipe(
        Effect.zipRight(Effect.ignore(Effect.timeoutOption(FiberMap.awaitEmpty(fibers), runsGrace))),
        Effect.zipRight(FiberMap.clear(fibers))
      )
    )

    const stored = yield* storedEvents

    const cancelLocal = (sessionId: string) =>
      Effect.gen(function*() {
        const run = runOf(sessionId)
        if (!run) return false
        yield* stopLocal(run, "cancel")
        return true
      })

    /** Gives up a lock whose run never started (a failure between `acquire` and `start`). */
    const release = (runId: string) => repo.release(runId)

    /**
     * Takes the session's lock; None when another run holds it. `withLock` gives writes (the message
     * that starts the run, for the run's id) that commit with the lock, and only if it is taken.
     */
    const acquire = (
      sessionId: string,
      taskId: string | null = null,
      withLock?: (runId: string) => GatedWrites
    ): Effect.Effect<Option.Option<string>> =>
      Effect.gen(function*() {
        const id = randomUUID()
        const lock = repo.lock({ id, sessionId, owner, taskId }, withLock?.(id))
        if (yield* lock) return Option.some(id)
        // Held: take the lock over only from a run whose process stopped heartbeating.
        if (!(yield* repo.failStale(sessionId, staleAfter))) return Option.none()
        return (yield* lock) ? Option.some(id) : Option.none()
      })

    /**
     * A place for one more run of `credential`, or None when it has `max` running on all processes
     * (RUNS_PER_CREDENTIAL_MAX). Given to `start`, it is given back when the run ends; a caller
     * whose run does not start gives it back itself (`release`).
     */
    const reserve = (credential: string, max: number): Effect.Effect<Option.Option<RunSlot>> =>
      Effect.map(quota.take(credential, max), Option.fromNullable)

    /** How many runs `credential` has running on all processes. */
    const runningFor = (credential: string) => quota.count(credential)

    /**
     * Starts a run whose lock `acquire` took. `body` gets `emit` and `carry` and produces the turn's
     * result; the run then ends with `response` (or `error` then `response`, or `cancelled`), and
     * gives back its credential's `slot` when it has one. What the body hands `carry` (its last
     * write) commits in the statement that records the run's end, whatever the outcome.
     */
    const start = (
      runId: string,
      sessionId: string,
      body: (
        emit: (...events: ReadonlyArray<AgentEvent>) => Effect.Effect<void>,
        carry: (writes: GatedWrites) => void
      ) => Effect.Effect<TurnResult, unknown>,
      slot?: RunSlot
    ) =>
      Effect.gen(function*() {
        const run = yield* makeLiveRun(runId, sessionId)
        live.set(runId, run)
        // Numbered and kept in order; several events (a batch of tokens) are published together.
        const emit = (...batch: ReadonlyArray<AgentEvent>) =>
          Effect.suspend(() => {
            const items = record(run, batch)
            flusher.pending(run)
            for (const follower of run.followers) follower(items)
            return Effect.void
          })
        // One writer's parts a statement: their names are fixed (db/Commit.ts).
        const carry = (writes: GatedWrites) => {
          if (run.carried) throw new Error("A run carries one write into its end")
          run.carried = writes
        }
        const finish = (exit: Exit.Exit<TurnResult, unknown>) =>
          Effect.gen(function*() {
            // The run no longer counts against its credential, whatever follows.
            if (slot) yield* slot.release
            let outcome: RunOutcome
            // The run's last events, handed to its readers only once written with its end: a
            // client that reads the session on `response` finds the answer stored.
            const closing: Array<AgentEvent> = []
            if (Exit.isSuccess(exit)) {
              outcome = { _tag: "complete", result: exit.value }
              closing.push({
                type: "response",
                text: exit.value.text,
                tools_used: exit.value.toolsUsed,
                client_actions: exit.value.clientActions,
                session_id: sessionId
              })
            } else if (Cause.isInterruptedOnly(exit.cause) && run.cancelRequested) {
              outcome = { _tag: "cancelled", partial: run.partialText }
              closing.push({ type: "cancelled" })
            } else {
              const interrupted = Cause.isInterruptedOnly(exit.cause)
              const message = !interrupted
                ? runFailureMessage(exit.cause)
                : run.lostLock
                ? lostLockMessage
                : "The server is shutting down; the run stopped before it finished"
              if (!interrupted) yield* Effect.logError("Agent run failed", exit.cause)
              const budget = interrupted ? undefined : budgetRefusal(exit.cause)
              outcome = interrupted ? { _tag: "interrupted", message } : { _tag: "failed", message, ...(budget ? { budget } : {}) }
              closing.push(...stoppedEnd(message, run.partialText, sessionId, interrupted ? {} : runFailureCode(exit.cause)))
            }
            // The last events, the body's carried writes and the run's end in one statement (one
            // round trip, one commit), after any background flush in flight, so a reader never
            // sees the end before them.
            yield* run.writing.take(1)
            let last = numberClosing(run, closing)
            const rest = [...run.unflushed.splice(0, run.unflushed.length), ...last]
            const status = outcome._tag === "interrupted" ? "failed" : outcome._tag
            // Told with the statement: readers elsewhere read the end; a task queued behind this run may start.
            const end = bus.publishWith(
              "run_end",
              runId,
              (notice) => repo.end({ runId, owner, status }, rest.map(storedRow), notice, run.carried)
            )
            if (!(yield* endOnce(end))) {
              // Fenced out: another process closed this run (its heartbeat stopped: a partition, a
              // pause) and may have run its task again. Nothing of its end was written; its
              // readers here get the end the log has, not the answer, and a task goes back to the
              // queue only if its lease is still this worker's (tasks/Worker.ts).
              yield* Effect.logWarning(
                `Run ${runId} was closed by another process before its end; its ${outcome._tag} end and answer were dropped`
              )
              outcome = { _tag: "interrupted", message: lostLockMessage }
              last = numberClosing(run, stoppedEnd(lostLockMessage, "", sessionId))
            }
            run.finished = true
            run.events.push(...last)
            for (const follower of run.followers) follower(last)
            // Written (or given up on): a finished run kept for a rejoin holds no statements.
            run.carried = undefined
            flusher.ended(run)
            yield* run.writing.release(1)
            yield* Deferred.succeed(run.done, outcome)
            // Every follower has had the last event (each ends itself on it).
            run.followers.clear()
            expiry.keep(runId)
          })
        // Keyed by the run, not the session: stopping a run that is ending (a heartbeat that read
        // its end as a lost lock) must never reach the session's next run, which may have started.
        // The run asks for no service (its body's type says so) and outlives the request that
        // starts it, so it runs in a context of its own, holding only the request's span (tracing):
        // each service the turn adds then copies that, not the request's seventy-odd entries, and
        // an open run keeps no request alive. Its fiber sets that context as its first step: it is
        // the fiber's for good, so nothing is put back (as `mapInputContext` would, in a region).
        const parent = yield* Effect.serviceOption(Tracer.ParentSpan)
        const runContext = Context.unsafeMake<never>(new Map(Option.isSome(parent) ? [[Tracer.ParentSpan.key, parent.value]] : []))
        yield* FiberMap.run(
          fibers,
          runId,
          Effect.zipRight(
            FiberRef.set(FiberRef.currentContext, runContext),
            Effect.suspend(() => body(emit, carry)).pipe(Effect.onExit(finish))
          )
        )
        return run
      })

    /** The events of a run after `after`, then live ones until it ends; no gap, no duplicate. */
    const events = (runId: string, after: number): Stream.Stream<SequencedEvent> => {
      const run = live.get(runId)
      if (!run) return stored(runId, after)
      return Stream.asyncPush<SequencedEvent>(
        (output) => attach(run, after, { items: (items) => output.array(items), end: () => output.end() }),
        {
          bufferSize: "unbounded"
        }
      )
    }

    /**
     * The same events for an SSE response (runs/Sse.ts): a run of this process pushes them to the
     * response itself, without a stream (its queue, its fiber) between the two; any other is `events`.
     */
    const follow = (runId: string, after: number): EventSource<never> => {
      const run = live.get(runId)
      return run ? (push) => Effect.asVoid(attach(run, after, push)) : events(runId, after)
    }

    const latestRun = (sessionId: string) => repo.latest(sessionId)

    const runExists = (runId: string, sessionId: string) => repo.exists(runId, sessionId)

    /** Cancels the session's run wherever it runs; answers whether there was one. */
    const cancel = (sessionId: string) =>
      Effect.gen(function*() {
        if (yield* cancelLocal(sessionId)) return true
        const requested = yield* repo.requestCancel(sessionId)
        if (requested) yield* bus.publish("run_cancel", sessionId)
        return requested
      })

    const awaitDone = (run: { readonly done: Deferred.Deferred<RunOutcome> }) => Deferred.await(run.done)

    // Spans only when tracing is on (`traced`): `Effect.fn` would make one, and a stack trace, on
    // every call of these, which every turn makes several of.
    return traced(
      "Runs",
      { acquire, release, start, reserve, runningFor, events, follow, latestRun, runExists, cancel, awaitDone, owner } as const
    )
  }),
  dependencies: [RunsRepo.Default, Bus.Default, RunSlots.Default]
}) {}
