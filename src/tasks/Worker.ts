/**
 * The task worker: a supervised pool that claims pending tasks (FOR UPDATE SKIP LOCKED, so several
 * server processes share one queue), runs each as an agent turn, and records the result. A claim
 * carries a lease the worker renews; a task whose lease ran out (its worker died) goes back to the
 * queue until `maxAttempts`, then fails with a clear error: never lost, never run twice at once.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Config, Duration, Effect, FiberSet, Layer, Option, Schedule } from "effect"
import { Bots } from "../bots/Bots.ts"
import { Channels } from "../channels/Channels.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Bus } from "../db/Bus.ts"
import { Leadership } from "../db/Leadership.ts"
import { transactions } from "../db/Repository.ts"
import { Memory } from "../health/Memory.ts"
import { Readiness } from "../health/Readiness.ts"
import { faultPointFor } from "../lifecycle/FaultInjection.ts"
import { interruptedMessage, staleAfter } from "../runs/Liveness.ts"
import { ownerGone } from "../runs/Owners.ts"
import { heartbeatEverySeconds, RunsRepo } from "../runs/Repo.ts"
import { type RunOutcome, Runs } from "../runs/Runs.ts"
import { turnChannel, Turns } from "../runs/Turns.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { conversationTurn } from "../sessions/Settings.ts"
import { SystemPaused } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { mergeSkills } from "../skills/Tags.ts"
import { Dispatchers } from "./delivery/Dispatchers.ts"
import type { ExecutionConfig } from "./Model.ts"
import { type TaskRow, TasksRepo } from "./Repo.ts"
import { Tasks } from "./Tasks.ts"

const workerConfig = Config.all({
  concurrency: Config.integer("TASK_CONCURRENCY").pipe(Config.withDefault(4)),
  /** The safety poll (defaults below): a queued task wakes the worker through the bus (db/Bus.ts) at once. */
  pollMs: Config.option(Config.integer("TASK_POLL_MS")),
  leaseSeconds: Config.integer("TASK_LEASE_SECONDS").pipe(Config.withDefault(60)),
  maxAttempts: Config.integer("TASK_MAX_ATTEMPTS").pipe(Config.withDefault(3))
})

/**
 * The safety poll's default, for a notice lost while PostgreSQL's listening connection was down;
 * a minute where the bus loses none (PGlite), as an idle server's claims were most of its statements.
 */
const defaultPollMs = 5_000
const losslessPollMs = 60_000

/** How often the leader looks for deliveries a stopped process left undone. */
const orphanSweep = Schedule.spaced(Duration.seconds(10))

/**
 * Recording a run's end again while the database does not answer (a failover, a blip): quick at
 * first, then every 5 s, for as long as a lease lasts; past that the lease lapses and the task is
 * taken again, its run's answer found stored (`settled`) or the turn run again.
 */
const recordRetry = (leaseSeconds: number) =>
  Schedule.exponential(Duration.millis(200)).pipe(
    Schedule.union(Schedule.spaced(Duration.seconds(5))),
    Schedule.upTo(Duration.seconds(leaseSeconds))
  )

interface Upkeep {
  readonly repo: TasksRepo
  readonly runsRepo: RunsRepo
  readonly tasks: Tasks
  readonly bus: Bus
  readonly worker: string
  readonly held: ReadonlySet<string>
  readonly config: { readonly leaseSeconds: number; readonly maxAttempts: number }
}

/**
 * Requeues (or fails) the tasks whose lease lapsed, told like any other change: a requeued task
 * wakes the workers, a failed one its waiters (one notice for them all; none when nothing was recovered).
 */
const recoverLapsed = ({ bus, config, repo, tasks }: Upkeep) =>
  Effect.flatMap(repo.recoverExpired(config.maxAttempts), (recovered) =>
    Effect.zipRight(
      tasks.changedAll(recovered.map((task) => task.id)),
      recovered.some((task) => task.status === "pending") ? bus.publish("tasks", "recovered") : Effect.void
    ))

/**
 * Every third of a lease: renews the leases of the tasks held here, closes the task runs of dead
 * holders, and requeues (or fails) the tasks whose lease lapsed.
 */
const leaseUpkeep = (upkeep: Upkeep) =>
  Effect.suspend(() => upkeep.repo.renewLeases(upkeep.worker, upkeep.config.leaseSeconds, [...upkeep.held])).pipe(
    Effect.zipRight(upkeep.runsRepo.releaseDeadTaskRuns),
    Effect.zipRight(recoverLapsed(upkeep)),
    Effect.catchAllCause((cause) => Effect.logError("Task lease upkeep failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.seconds(Math.max(1, Math.floor(upkeep.config.leaseSeconds / 3)))))
  )

/**
 * Each heartbeat (PostgreSQL, several processes): the tasks whose run's holder is gone (a killed
 * host: its connection closed, its heartbeats missed) lose their lease now, their runs are closed
 * and they are requeued, so another host answers them within seconds rather than a lease.
 */
const deadHolderSweep = (upkeep: Upkeep) =>
  upkeep.runsRepo.expireTasksOfGoneRuns(Duration.toSeconds(staleAfter)).pipe(
    Effect.flatMap((orphaned) =>
      orphaned.length === 0
        ? Effect.void
        : Effect.zipRight(
          upkeep.runsRepo.closeRuns({ staleSeconds: Duration.toSeconds(staleAfter) }, interruptedMessage),
          recoverLapsed(upkeep)
        )
    ),
    // A database away is told by readiness and the lease upkeep; this runs each second, so it stays quiet.
    Effect.catchAllCause((cause) => Effect.logDebug("Sweeping the tasks of gone run holders failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.seconds(heartbeatEverySeconds)))
  )

/** At a stop: waits up to `graceMs` for the `running()` tasks to finish. */
const awaitRunning = (running: () => number, graceMs: number) =>
  Effect.gen(function*() {
    if (running() === 0) return
    yield* Effect.logInfo(`Stopping: waiting up to ${graceMs} ms for ${running()} running task(s) to finish`)
    yield* Effect.sleep(Duration.millis(100)).pipe(
      Effect.repeat({ until: () => running() === 0 }),
      Effect.timeout(Duration.millis(graceMs)),
      Effect.ignore
    )
  })

export const WorkerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* workerConfig
    const transaction = transactions(yield* SqlClient.SqlClient)
    const repo = yield* TasksRepo
    const runsRepo = yield* RunsRepo
    const runs = yield* Runs
    const turns = yield* Turns
    const sessions = yield* Sessions
    const bots = yield* Bots
    const channels = yield* Channels
    const settings = yield* Settings
    const dispatchers = yield* Dispatchers
    const tasks = yield* Tasks
    const bus = yield* Bus
    const leadership = yield* Leadership
    const memory = yield* Memory
    const readiness = yield* Readiness
    const { shutdownGraceMs } = yield* AppConfig
    const worker = runs.owner
    let active = 0
    /** The tasks this worker's fibers run now: only their leases are renewed. */
    const held = new Set<string>()
    // Task fibers belong to the worker's scope: at shutdown they stop, and their tasks, still
    // leased, go back to the queue once the lease runs out.
    const running = yield* FiberSet.make()
    // The drain (a stop): no claim once the server is stopping; the runs under way get the grace
    // to finish, and what is still running then goes back to the queue (its lease's holder stops),
    // for the next process. Added after the fiber set, so it runs before the set interrupts them.
    yield* Effect.addFinalizer(() => awaitRunning(() => active, shutdownGraceMs))

    /**
     * Whether a pending task was left unclaimed, waiting for its session's run to end: only then
     * does a run's end (a notice every turn) call for another claim.
     */
    let waitingForSession = true

    /**
     * Records how the task's run ended: only while the task is still this worker's (a worker whose
     * lease was taken over must not finish, or deliver, a task that another worker now runs), and
     * its result's delivery then. A run stopped by the server (a shutdown, a lost lock, an end
     * fenced out: runs/Runs.ts) sends the task back to the queue, untold.
     */
    const record = (task: TaskRow, outcome: RunOutcome) =>
      Effect.gen(function*() {
        if (outcome._tag === "interrupted") return yield* repo.release(task.id, worker)
        let finished = false
        if (outcome._tag === "complete") {
          finished = yield* repo.complete(task.id, worker, outcome.result.text, outcome.result.clientActions)
        } else if (outcome._tag === "cancelled") yield* repo.markCancelled(task.id)
        else finished = yield* repo.fail(task.id, outcome.message, worker)
        yield* tasks.changed(task.id)
        if (finished) yield* faultPointFor("after-answer", task.prompt)
        if (finished && task.dispatch_type !== "none") yield* FiberSet.run(running, dispatchers.deliver(task.id))
      })

    /** How the task's earlier run ended, if it ended with an answer (`RunsRepo.settled`). */
    const earlierRunEnd = (task: TaskRow) => task.run_id ? runsRepo.settled(task.run_id) : Effect.succeed(Option.none())

    const execute = (task: TaskRow) =>
      Effect.gen(function*() {
        // Its run ended, its answer stored, but its worker died before recording that (a kill
        // between the two): the task is recorded from that run, not answered again.
        const settled = yield* earlierRunEnd(task)
        if (Option.isSome(settled)) return yield* record(task, settledOutcome(settled.value))
        // Everything that can fail is read before the session's lock is taken.
        const session = yield* sessions.get(task.session_id)
        // The conversation's instructions, temperature and model, as a direct turn takes them.
        const conversation = conversationTurn(yield* bots.get(task.bot_id), session, task.model_override ?? undefined)
        const channel = task.channel_id ? yield* Effect.option(channels.get(task.channel_id)) : Option.none()
        // The user's message is stored once, with the mark that says so, in one transaction: a
        // retried task (its worker died) never stores it twice.
        if (!task.prompt_stored) {
          yield* transaction(
            Effect.zipRight(
              sessions.append(session.id, {
                role: "user",
                content: task.prompt,
                attachments: task.attachments,
                metadata: { task_id: task.id, source: task.source }
              }),
              repo.markPromptStored(task.id)
            )
          )
        }
        // Taking the lock and starting the run happen together: a lock whose run never started is
        // given back at once rather than left to go stale.
        const run = yield* Effect.uninterruptible(
          Effect.gen(function*() {
            const lock = yield* runs.acquire(task.session_id, task.id)
            if (Option.isNone(lock)) return { _tag: "busy" } as const
            return yield* Effect.gen(function*() {
              // The task's earlier run may have ended since the check above: its holder was cut off
              // from the database, not dead, and its end landed once it was back. With the session's
              // lock held no earlier run can still end, so this second read is the last word.
              const endedMeanwhile = yield* earlierRunEnd(task)
              if (Option.isSome(endedMeanwhile)) {
                yield* runs.release(lock.value)
                return { _tag: "settled", settled: endedMeanwhile.value } as const
              }
              yield* repo.attachRun(task.id, lock.value)
              yield* tasks.changed(task.id)
              return {
                _tag: "started",
                run: yield* turns.start({
                  runId: lock.value,
                  sessionId: session.id,
                  clientId: session.client_id,
                  bot: conversation.bot,
                  channel: Option.match(channel, { onNone: () => null, onSome: turnChannel }),
                  userText: null,
                  modelOverride: conversation.modelOverride,
                  executionConfig: withSkillTags(task),
                  dispatch: { type: task.dispatch_type, config: task.dispatch_config }
                })
              } as const
            }).pipe(Effect.onError(() => runs.release(lock.value).pipe(Effect.ignore)))
          })
        )
        if (run._tag === "busy") {
          // Its session is busy after all: the run's end calls for the next claim.
          waitingForSession = true
          return yield* repo.release(task.id, worker)
        }
        if (run._tag === "settled") return yield* record(task, settledOutcome(run.settled))
        yield* faultPointFor("mid-run", task.prompt)
        const outcome = yield* runs.awaitDone(run.run)
        if (outcome._tag !== "interrupted") yield* faultPointFor("after-run", task.prompt)
        yield* record(task, outcome).pipe(Effect.retry(recordRetry(config.leaseSeconds)))
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void
            : Effect.zipRight(
              Effect.logError(`Task ${task.id} failed before its run`, cause),
              repo.fail(task.id, "The task could not start: " + String(Cause.squash(cause)).split("\n", 1)[0], worker).pipe(
                Effect.tap(() => tasks.changed(task.id)),
                Effect.tap((
                  failed
                ) => (failed && task.dispatch_type !== "none" ? FiberSet.run(running, dispatchers.deliver(task.id)) : Effect.void)),
                Effect.ignore
              )
            )
        )
      )

    /** Claims while there are free slots and claimable tasks. */
    const drain = Effect.gen(function*() {
      // Paused, short of memory or stopping: queued tasks wait in the queue.
      if ((yield* settings.get(SystemPaused)) || (yield* memory.shedding) || (yield* readiness.isDraining)) return
      // A run that ends while these claims are made may free the session of a task they leave:
      // its notice is kept until the claims tell whether one waits.
      waitingForSession = true
      while (active < config.concurrency) {
        const task = yield* repo.claim(worker, config.leaseSeconds)
        if (!task) {
          waitingForSession = yield* repo.hasPending
          return
        }
        active += 1
        held.add(task.id)
        yield* FiberSet.run(
          running,
          execute(task).pipe(Effect.ensuring(Effect.zipRight(
            Effect.sync(() => {
              active -= 1
              held.delete(task.id)
            }),
            tasks.signalWork
          )))
        )
      }
      // Every slot is busy: a slot freed (`awaitWork`), not a run's end, calls for the next claim.
      waitingForSession = false
    })

    // Tasks a process on this host held when it died go back to the queue now (the upkeep below
    // runs at once), not when their lease lapses.
    const gone = (yield* repo.runningWorkers).filter((holder) => ownerGone(holder, worker))
    if (gone.length > 0) yield* repo.expireLeases(gone)

    // Next cycle as soon as a task is queued or recovered (in any process), a setting changes (the
    // system unpaused), a run ends while a task waits for its session, a slot here frees, or memory
    // pressure is gone; else on the safety poll.
    const pollMs = Option.getOrElse(config.pollMs, () => (bus.lossless ? losslessPollMs : defaultPollMs))
    const queued = yield* bus.waker(["tasks", "invalidate"], { safety: Schedule.spaced(Duration.millis(pollMs)) })
    // A run's end is taken only while a task waits for its session: every chat turn ends a run,
    // and one a worker with nothing to wait for is handed would wake it for nothing.
    const runEnded = yield* bus.waker(["run_end"], { safety: null, wanted: () => waitingForSession })
    const sessionFreed = runEnded.pipe(Effect.repeat({ until: () => waitingForSession }))
    yield* Effect.forkScoped(
      drain.pipe(
        Effect.catchAllCause((cause) => Effect.logError("Task worker cycle failed", cause)),
        Effect.zipRight(Effect.raceAll([queued, sessionFreed, tasks.awaitWork, memory.relieved])),
        Effect.forever
      )
    )
    const upkeep: Upkeep = { repo, runsRepo, tasks, bus, worker, held, config }
    yield* Effect.forkScoped(leaseUpkeep(upkeep))
    if (leadership.backend === "postgres") yield* Effect.forkScoped(deadHolderSweep(upkeep))
    // One process sweeps orphaned deliveries (the leader lock), not each of them at once.
    yield* Effect.forkScoped(
      leadership.lead(
        "orphan-deliveries",
        dispatchers.deliverOrphans.pipe(
          Effect.catchAllCause((cause) => Effect.logError("Orphaned delivery sweep failed", cause)),
          Effect.repeat(orphanSweep)
        ),
        { onFollowing: Effect.void, onLeading: Effect.logDebug("Sweeping orphaned deliveries") }
      )
    )
  })
).pipe(
  Layer.provide(
    Layer.mergeAll(
      TasksRepo.Default,
      RunsRepo.Default,
      Runs.Default,
      Turns.Default,
      Sessions.Default,
      Bots.Default,
      Channels.Default,
      Settings.Default,
      Dispatchers.Default,
      Tasks.Default,
      Bus.Default,
      Leadership.Default,
      Memory.Default,
      Readiness.Default
    )
  )
)

/** A run's recorded end (`RunsRepo.settled`) as the outcome its task records. */
const settledOutcome = (
  settled: { readonly status: "complete" | "cancelled"; readonly text: string | null; readonly client_actions: unknown }
): RunOutcome =>
  settled.status === "cancelled"
    ? { _tag: "cancelled", partial: "" }
    : {
      _tag: "complete",
      result: {
        text: settled.text ?? "",
        toolsUsed: [],
        clientActions: Array.isArray(settled.client_actions) ? settled.client_actions : [],
        toolCalls: [],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
      }
    }

/** The task's execution_config with the `@skill:<id>` tags of its message merged into `skills`. */
export const withSkillTags = (task: Pick<TaskRow, "execution_config" | "prompt">): ExecutionConfig => {
  const config = task.execution_config as ExecutionConfig
  const skills = mergeSkills(config.skills, task.prompt)
  return skills.length > 0 ? { ...config, skills } : config
}
