/**
 * Agent runs: one at a time per session, locked in the database (a partial unique index on
 * `runs`), so the lock holds across server processes. A run lives in its own fiber, supervised by
 * this service, so a client that disconnects does not stop it. Its events are numbered, kept in
 * memory while it runs here, and written to `run_events` in small batches, so a client can rejoin
 * a live or finished run and get what it missed, with no gap and no duplicate.
 */
import { Cause, Chunk, Context, Deferred, Duration, Effect, Exit, FiberMap, FiberRef, Option, Schedule, Stream, Tracer } from "effect"
import { randomUUID } from "node:crypto"
import { type AgentEvent, fromStored, isTerminal, type SequencedEvent, toStored } from "../agent/Events.ts"
import type { TurnResult } from "../agent/Turn.ts"
import { Bus } from "../db/Bus.ts"
import type { CarriedWrites, GatedWrites } from "../db/Commit.ts"
import { writeBehind } from "../db/WriteBehind.ts"
import { ShutdownSignal } from "../lifecycle/Shutdown.ts"
import { traced } from "../telemetry/Spans.ts"
import { makeOwner, ownerGone, releaseOwner } from "./Owners.ts"
import { makeQuota, type RunSlot } from "./Quota.ts"
import { RunsRepo } from "./Repo.ts"
import type { EventPush, EventSource } from "./Sse.ts"

export type RunOutcome =
  | { readonly _tag: "complete"; readonly result: TurnResult }
  | { readonly _tag: "failed"; readonly message: string }
  | { readonly _tag: "cancelled"; readonly partial: string }
  /** Stopped by the server (shutdown, lost lock), not by the run or the user: a task is retried. */
  | { readonly _tag: "interrupted"; readonly message: string }

interface LiveRun {
  readonly id: string
  readonly sessionId: string
  readonly events: Array<SequencedEvent>
  readonly unflushed: Array<SequencedEvent>
  /** When the oldest of `unflushed` was emitted (ms since the epoch). */
  unflushedSince: number
  /** The write the run's body left to commit with its end (its answer): one statement for both. */
  carried: CarriedWrites | undefined
  /** The readers following it live: each is handed every batch of events as it is emitted. */
  readonly followers: Set<(items: ReadonlyArray<SequencedEvent>) => void>
  readonly done: Deferred.Deferred<RunOutcome>
  cancelRequested: boolean
  lostLock: boolean
  finished: boolean
  /** One writer of the run's events at a time, so the end never overtakes a background flush. */
  readonly writing: Effect.Semaphore
  partialText: string
}

/** A run that stopped heartbeating this long ago lost its process; its lock is taken over. */
export const staleAfter = Duration.seconds(30)
const heartbeatEvery = Duration.seconds(5)
/**
 * A running run's events are written once the oldest unwritten one is this old (so within one to
 * two of these after it is emitted): a run shorter than that writes them only with its end.
 */
const flushEvery = Duration.millis(150)
/**
 * How long a finished run stays in memory for a quick rejoin (the database keeps it anyway): long
 * enough for a client's reconnect. At a few hundred turns a second each second kept is hundreds of
 * runs in the old generation, marked again by every full collection (a minute kept some 15,000).
 */
export const keepFinished = Duration.seconds(10)
/** What a run closed for a process that stopped says to its readers. */
const interruptedMessage = "The server running this session stopped before the run finished"

/** Recording the end of a run, once its first attempt failed: tried again and retried twice (four attempts in all) before it is only logged. */
const endRetries = Schedule.recurs(2)

export class Runs extends Effect.Service<Runs>()("cairn/Runs", {
  scoped: Effect.gen(function*() {
    const repo = yield* RunsRepo
    const bus = yield* Bus
    const owner = makeOwner()
    yield* Effect.addFinalizer(() => Effect.sync(() => releaseOwner(owner)))
    // Finished runs stay in memory `keepFinished` for a quick rejoin, then one timer drops them: a
    // queue in the order they finished (so in the order they expire), not a fiber each (thousands
    // at a few hundred turns a second, each kept alive for `keepFinished`, cost the garbage collector).
    const expiring: Array<{ readonly id: string; readonly at: number }> = []
    let expiringHead = 0
    let sweepTimer: ReturnType<typeof setTimeout> | undefined
    const sweep = () => {
      sweepTimer = undefined
      const now = Date.now()
      while (expiringHead < expiring.length && expiring[expiringHead]!.at <= now) live.delete(expiring[expiringHead++]!.id)
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
    const fibers = yield* FiberMap.make<string>()
    const live = new Map<string, LiveRun>()
    // The runs with events to write: the flush visits these, not every run kept in memory (a
    // finished run lingers `keepFinished`, thousands of them at a few hundred turns a second).
    const unwritten = new Set<LiveRun>()
    const quota = makeQuota()

    /**
     * Writes the run's unwritten events while it runs (committed relaxed by the statement itself:
     * replay data, not the turn itself); answers whether it wrote any, so readers in other
     * processes can be told (one notice a cycle).
     */
    const flush = (run: LiveRun) =>
      Effect.suspend(() => {
        if (run.unflushed.length === 0 || run.finished) return Effect.succeed(false)
        const batch = run.unflushed.splice(0, run.unflushed.length)
        return repo.appendEvents(run.id, batch.map(storedRow)).pipe(
          Effect.as(true),
          // Put the batch back, due at once, so the next flush retries it (a database failure is a defect).
          Effect.onError(() => Effect.sync(() => (run.unflushed.unshift(...batch), (run.unflushedSince = 0), unwritten.add(run))))
        )
      }).pipe((effect) => run.writing.withPermits(1)(effect))

    // At start, the runs of a process on this host that is gone (a crash, a kill) end now, with
    // `error` and `response` in their log, so their sessions take the next message at once.
    const orphaned = (yield* repo.runningOwners).filter((holder) => ownerGone(holder, owner))
    if (orphaned.length > 0) {
      const closed = yield* repo.closeRuns({ owners: orphaned }, interruptedMessage)
      if (closed > 0) yield* Effect.logWarning(`Closed ${closed} run(s) of a server process that stopped without finishing them`)
    }
    // Runs of any process whose heartbeat stopped (another host, a hung process) are closed as
    // they go stale, not left running until a message to their session happens to take them over.
    yield* Effect.forkScoped(
      repo.closeRuns({ staleSeconds: Duration.toSeconds(staleAfter) }, interruptedMessage).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Closing stale runs failed", cause)),
        Effect.repeat(Schedule.spaced(staleAfter))
      )
    )

    // Background: write events out (telling readers elsewhere), keep this process's runs alive,
    // notice remote cancels. Only runs whose events have waited `flushEvery` are written: most
    // turns end sooner, and their end writes their events in its own statement.
    const eventWrites = yield* writeBehind(
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
    yield* Effect.forkScoped(
      Effect.gen(function*() {
        // Only runs alive in this process keep their lock; an orphaned row (its run never started)
        // goes stale and is taken over.
        const mine = [...live.values()].filter((run) => !run.finished)
        if (mine.length === 0) return
        const kept = yield* repo.heartbeat(mine.map((run) => run.id))
        const still = new Map(kept.map((row) => [row.id, row.cancel_requested]))
        for (const run of mine) {
          // Its end was written while the heartbeat was on its way: not a lost lock.
          if (run.finished) continue
          // Another process took the lock over (this one looked dead): stop, so two runs never share a session.
          if (!still.has(run.id)) yield* stopLocal(run, "lost_lock")
          else if (still.get(run.id)) yield* stopLocal(run, "cancel")
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
            const run = runOf(sessionId)
            if (!run) return
            const [row] = yield* repo.heartbeat([run.id])
            if (row?.cancel_requested) yield* stopLocal(run, "cancel")
          }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Reading a cancel request failed", cause)))
        )
      )
    )

    // At shutdown every run here stops and ends its stream with `error` then `response`.
    const shutdown = yield* ShutdownSignal
    yield* Effect.forkScoped(Effect.zipRight(Deferred.await(shutdown), FiberMap.clear(fibers)))

    const runOf = (sessionId: string) => [...live.values()].find((run) => run.sessionId === sessionId && !run.finished)

    const stopLocal = (run: LiveRun, reason: "cancel" | "lost_lock") =>
      Effect.gen(function*() {
        if (reason === "cancel") run.cancelRequested = true
        else run.lostLock = true
        yield* FiberMap.remove(fibers, run.id)
      })

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
     * A place for one more run of `credential`, or None when it has `max` running in this process
     * (RUNS_PER_CREDENTIAL_MAX). Given to `start`, it is given back when the run ends; a caller
     * whose run does not start gives it back itself (`release`).
     */
    const reserve = (credential: string, max: number): Effect.Effect<Option.Option<RunSlot>> =>
      Effect.sync(() => Option.fromNullable(quota.take(credential, max)))

    /** How many runs `credential` has running in this process. */
    const runningFor = (credential: string) => Effect.sync(() => quota.count(credential))

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
        carry: (writes: CarriedWrites) => void
      ) => Effect.Effect<TurnResult, unknown>,
      slot?: RunSlot
    ) =>
      Effect.gen(function*() {
        const run: LiveRun = {
          id: runId,
          sessionId,
          events: [],
          unflushed: [],
          unflushedSince: 0,
          carried: undefined,
          followers: new Set(),
          done: yield* Deferred.make<RunOutcome>(),
          cancelRequested: false,
          lostLock: false,
          finished: false,
          writing: yield* Effect.makeSemaphore(1),
          partialText: ""
        }
        live.set(runId, run)
        // Numbered and kept in order; several events (a batch of tokens) are published together.
        const emit = (...batch: ReadonlyArray<AgentEvent>) =>
          Effect.suspend(() => {
            const items: Array<SequencedEvent> = []
            if (run.unflushed.length === 0) run.unflushedSince = Date.now()
            for (const event of batch) {
              const item = { seq: run.events.length + 1, event }
              run.events.push(item)
              run.unflushed.push(item)
              items.push(item)
              if (event.type === "assistant_text") run.partialText = event.text
            }
            unwritten.add(run)
            eventWrites.wake()
            for (const follower of run.followers) follower(items)
            return Effect.void
          })
        // One writer's parts a statement: their names are fixed (db/Commit.ts).
        const carry = (writes: CarriedWrites) => {
          if (run.carried) throw new Error("A run carries one write into its end")
          run.carried = writes
        }
        const finish = (exit: Exit.Exit<TurnResult, unknown>) =>
          Effect.gen(function*() {
            // The run no longer counts against its credential, whatever follows.
            if (slot) yield* slot.release
            let outcome: RunOutcome
            if (Exit.isSuccess(exit)) {
              outcome = { _tag: "complete", result: exit.value }
              yield* emit({
                type: "response",
                text: exit.value.text,
                tools_used: exit.value.toolsUsed,
                client_actions: exit.value.clientActions,
                session_id: sessionId
              })
            } else if (Cause.isInterruptedOnly(exit.cause) && run.cancelRequested) {
              outcome = { _tag: "cancelled", partial: run.partialText }
              yield* emit({ type: "cancelled" })
            } else {
              const interrupted = Cause.isInterruptedOnly(exit.cause)
              const message = !interrupted
                ? runFailureMessage(exit.cause)
                : run.lostLock
                ? "Another server process took this session over; the run stopped"
                : "The server is shutting down; the run stopped before it finished"
              if (!interrupted) yield* Effect.logError("Agent run failed", exit.cause)
              outcome = interrupted ? { _tag: "interrupted", message } : { _tag: "failed", message }
              yield* emit({ type: "error", message })
              yield* emit({ type: "response", text: run.partialText, tools_used: [], client_actions: [], session_id: sessionId })
            }
            // The last events, the body's carried writes and the run's end in one statement (one
            // round trip, one commit), after any background flush in flight, so a reader never
            // sees the end before them.
            yield* run.writing.take(1)
            const rest = run.unflushed.splice(0, run.unflushed.length)
            const status = outcome._tag === "interrupted" ? "failed" : outcome._tag
            // Retried on any database failure (a defect, so sandboxed for the retry). Told with the
            // statement: readers elsewhere read the end; a task queued behind this run may start.
            const rows = rest.map(storedRow)
            const end = bus.publishWith("run_end", runId, (notice) => repo.end(runId, status, rows, notice, run.carried))
            // The retry's schedule is set up only after a first failure: every turn ends a run.
            yield* end.pipe(
              Effect.catchAllCause(() =>
                Effect.sandbox(end).pipe(
                  Effect.retry(endRetries),
                  Effect.catchAll((cause) => Effect.logError("Could not record the end of a run", cause))
                )
              )
            )
            run.finished = true
            // Written (or given up on): a finished run kept for a rejoin holds no statements.
            run.carried = undefined
            unwritten.delete(run)
            yield* run.writing.release(1)
            yield* Deferred.succeed(run.done, outcome)
            // Every follower has had the last event (each ends itself on it).
            run.followers.clear()
            expiring.push({ id: runId, at: Date.now() + Duration.toMillis(keepFinished) })
            scheduleSweep()
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

    /**
     * Hands a run of this process's events after `after`, then its live ones until it ends, to
     * `push`; no gap, no duplicate: what the run holds and the follower's registration are one
     * synchronous step, so no event falls between them, and each batch `emit` makes is then handed
     * over as it is made. The follower goes when the caller's scope closes.
     */
    const attach = (run: LiveRun, after: number, push: EventPush) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const held = run.events.filter((item) => item.seq > after)
          if (held.length > 0) push.items(held)
          if (held.some((item) => isTerminal(item.event)) || run.finished) {
            push.end()
            return undefined
          }
          const follower = (items: ReadonlyArray<SequencedEvent>) => {
            push.items(items)
            if (items.some((item) => isTerminal(item.event))) {
              run.followers.delete(follower)
              push.end()
            }
          }
          run.followers.add(follower)
          return follower
        }),
        (follower) => Effect.sync(() => void (follower && run.followers.delete(follower)))
      )

    /** The events of a run after `after`, then live ones until it ends; no gap, no duplicate. */
    const events = (runId: string, after: number): Stream.Stream<SequencedEvent> => {
      const run = live.get(runId)
      if (!run) return storedEvents(runId, after)
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

    /**
     * A run of another process (or a finished one): read from the database, again each time the bus
     * says the run wrote events (or on its safety poll) while it runs.
     */
    const storedEvents = (runId: string, after: number): Stream.Stream<SequencedEvent> =>
      Stream.unwrapScoped(Effect.map(bus.waker(["run_events", "run_end"], { key: runId }), (wake) => storedPages(runId, after, wake)))

    const storedPages = (runId: string, after: number, wake: Effect.Effect<void>): Stream.Stream<SequencedEvent> =>
      Stream.paginateChunkEffect({ cursor: after, done: false }, (state) =>
        Effect.gen(function*() {
          if (state.done) return [Chunk.empty<SequencedEvent>(), Option.none()] as const
          const all = yield* repo.events(runId)
          const rebuilt = fromStored(all).filter((item) => item.seq > state.cursor)
          const ended = rebuilt.some((item) => isTerminal(item.event))
          if (ended) return [Chunk.fromIterable(rebuilt), Option.some({ cursor: state.cursor, done: true })] as const
          const status = Option.getOrUndefined(yield* repo.status(runId, staleAfter))
          if (status?.status !== "running" && rebuilt.length === 0) {
            return [Chunk.empty<SequencedEvent>(), Option.none()] as const
          }
          // The process running it died: end the stream as that run would have, not wait forever.
          if (status?.stale && rebuilt.length === 0) {
            const message = interruptedMessage
            return [
              Chunk.fromIterable<SequencedEvent>([
                { seq: state.cursor + 1, event: { type: "error", message } },
                { seq: state.cursor + 2, event: { type: "response", text: "", tools_used: [], client_actions: [], session_id: "" } }
              ]),
              Option.some({ cursor: state.cursor + 2, done: true })
            ] as const
          }
          if (rebuilt.length === 0) yield* wake
          const cursor = rebuilt.length > 0 ? rebuilt[rebuilt.length - 1]!.seq : state.cursor
          return [Chunk.fromIterable(rebuilt), Option.some({ cursor, done: false })] as const
        }))

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
  dependencies: [RunsRepo.Default, Bus.Default]
}) {}

/** An event as the log stores it. */
const storedRow = (item: SequencedEvent) => ({ seq: item.seq, event: toStored(item.event) })

/**
 * What a run's failure says to its client: a model's failure with its detail, a declared error's
 * own words; a defect (a bug, a database error) only that the server failed, since its text is
 * internal (the log has it whole).
 */
export const runFailureMessage = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "None") return "The run failed on an internal error; the server log has the details"
  const error = failure.value
  if (error && typeof error === "object") {
    const tagged = error as { _tag?: string; detail?: unknown; message?: unknown }
    if (tagged._tag === "LlmError" && typeof tagged.detail === "string") return `The model call failed: ${tagged.detail}`
    if (typeof tagged.detail === "string" && tagged.detail) return tagged.detail
    if (typeof tagged.message === "string" && tagged.message) return tagged.message
  }
  return "The run failed"
}
