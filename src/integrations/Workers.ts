/**
 * Integration workers (`worker.ts`, `cairn.registerWorker`): each runs as a supervised fiber in the
 * application scope. It starts only when its required settings resolve (stored, environment,
 * default), after its start delay; a failure is logged with the integration's name and the worker is
 * started again after an exponential backoff with jitter; a settings change (announced in this
 * process, or seen by a periodic re-read when another process made it) restarts it; shutdown stops
 * it within WORKER_STOP_GRACE_MS. A singleton runs only in the process that leads its name
 * (db/Leadership.ts).
 */
import { Config, Data, Duration, Effect, Layer, PubSub, Queue, Schedule } from "effect"
import { Leadership } from "../db/Leadership.ts"
import type { ContactState, IntegrationContext, Worker, WorkerContext, WorkerState } from "../sdk/index.ts"
import { failureMessage } from "./Context.ts"
import { Integrations } from "./Integrations.ts"
import { IntegrationStoreRepo } from "./Repo.ts"
import { IntegrationSettings } from "./Settings.ts"

export interface WorkerStatus {
  readonly name: string
  readonly description: string
  readonly singleton: boolean
  readonly state: WorkerState
  readonly required_settings: ReadonlyArray<string>
  readonly missing_settings: ReadonlyArray<string>
  readonly restarts: number
  readonly last_error: { readonly message: string; readonly at: string } | null
  readonly next_attempt_at: string | null
  readonly started_at: string | null
  /** What the worker last reported (`worker.report`). */
  readonly detail: Record<string, unknown>
  /** Whether it reports its contacts (`connects`): until the first, it is connecting. */
  readonly connects: boolean
  /** Its last real contact (`worker.contact`), kept across restarts. */
  readonly contact: { readonly state: ContactState; readonly reason: string | null; readonly at: string } | null
  /** When the failures it is in began (a failed contact or run); null once a contact succeeds. */
  readonly failing_since: string | null
}

const workersConfig = Config.all({
  restartBaseMs: Config.integer("WORKER_RESTART_BASE_MS").pipe(Config.withDefault(1000)),
  restartMaxMs: Config.integer("WORKER_RESTART_MAX_MS").pipe(Config.withDefault(60_000)),
  stopGraceMs: Config.integer("WORKER_STOP_GRACE_MS").pipe(Config.withDefault(5000)),
  settingsPollMs: Config.integer("WORKER_SETTINGS_POLL_MS").pipe(Config.withDefault(60_000)),
  storeSweepMs: Config.integer("STORE_SWEEP_MS").pipe(Config.withDefault(300_000))
})

/** A worker's run failed (threw, rejected, or its Effect failed) after running `upMs`. */
class WorkerFailed extends Data.TaggedError("WorkerFailed")<{ readonly message: string; readonly upMs: number }> {}

/**
 * Between a worker's restarts: exponential from `baseMs` (WORKER_RESTART_BASE_MS), at most `maxMs`
 * (WORKER_RESTART_MAX_MS), each wait 50–100% of that so workers failing together do not retry
 * together; it starts over after a run that stayed up longer than `maxMs`. Answers each wait with
 * the failure it follows.
 */
const workerRestarts = (baseMs: number, maxMs: number) =>
  Schedule.exponential(Duration.millis(baseMs)).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(maxMs))),
    Schedule.jitteredWith({ min: 0.5, max: 1 }),
    Schedule.delays,
    Schedule.intersect(Schedule.identity<WorkerFailed>()),
    Schedule.resetWhen(([, failure]) => failure.upMs > maxMs)
  )

export class WorkerManager extends Effect.Tag("cairn/WorkerManager")<
  WorkerManager,
  { readonly statuses: (integrationId: string) => ReadonlyArray<WorkerStatus> }
>() {}

const isEffect = (value: unknown): value is Effect.Effect<void, unknown> => Effect.isEffect(value)

/** An abortable sleep for integration code: true after `ms`, false as soon as the signal aborts. */
const abortableSleep = (signal: AbortSignal) => (ms: number) =>
  new Promise<boolean>((resolve) => {
    if (signal.aborted) return resolve(false)
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort)
      resolve(true)
    }, Math.max(0, ms))
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    signal.addEventListener("abort", onAbort, { once: true })
  })

export const WorkersLive = Layer.scoped(
  WorkerManager,
  Effect.gen(function*() {
    const config = yield* workersConfig
    /** A supervisor that failed (the database, say) starts again after this. */
    const supervisorRestart = Schedule.spaced(Duration.millis(config.restartBaseMs))
    /** How often expired store entries are swept. */
    const storeSweepEvery = Schedule.spaced(Duration.millis(config.storeSweepMs))
    const integrations = yield* Integrations
    const settings = yield* IntegrationSettings
    const leadership = yield* Leadership
    const store = yield* IntegrationStoreRepo
    const statuses = new Map<string, Map<string, WorkerStatus>>()
    const wakeups = new Map<string, Array<Queue.Queue<void>>>()
    const changes = yield* PubSub.subscribe(settings.changes)

    // Each settings change wakes every worker of that integration ("*": another process changed
    // some; every worker compares what it runs with).
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(
          Queue.take(changes),
          (id) =>
            Effect.forEach(id === "*" ? [...wakeups.values()].flat() : (wakeups.get(id) ?? []), (queue) => Queue.offer(queue, undefined))
        )
      )
    )

    const supervise = (
      integrationId: string,
      manifest: Parameters<IntegrationSettings["resolve"]>[1],
      context: IntegrationContext,
      worker: Worker
    ) =>
      Effect.gen(function*() {
        const name = worker.name ?? "worker"
        const required = worker.requiredSettings ?? []
        const wake = yield* Queue.sliding<void>(1)
        wakeups.set(integrationId, [...(wakeups.get(integrationId) ?? []), wake])
        const byName = statuses.get(integrationId) ?? new Map<string, WorkerStatus>()
        statuses.set(integrationId, byName)
        let status: WorkerStatus = {
          name,
          description: worker.description ?? "",
          singleton: worker.singleton === true,
          // Until its settings are first read.
          state: "starting",
          required_settings: required,
          missing_settings: [],
          restarts: 0,
          last_error: null,
          next_attempt_at: null,
          started_at: null,
          detail: {},
          connects: worker.connects === true,
          contact: null,
          failing_since: null
        }
        const set = (patch: Partial<WorkerStatus>) => Effect.sync(() => byName.set(name, status = { ...status, ...patch }))
        yield* set({})
        const log = (message: string) => Effect.annotateLogs({ integration: integrationId, worker: name })(Effect.logInfo(message))

        /** The integration's settings now, with each required name the manifest does not declare read from the environment. */
        const values = Effect.gen(function*() {
          const resolved = yield* settings.resolve(integrationId, manifest)
          const all: Record<string, string | undefined> = Object.fromEntries(resolved.map((s) => [s.key, s.value]))
          for (const key of required) if (all[key] === undefined) all[key] = yield* settings.environment(key)
          return all
        })
        const fingerprint = (all: Record<string, string | undefined>) =>
          JSON.stringify(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : 1)))

        /**
         * Completes when the settings differ from `seen`: looked at when a change is announced (in
         * this process or another, through the bus) and on the slow safety re-read.
         */
        const settingsChange = (seen: string) =>
          Effect.gen(function*() {
            for (;;) {
              yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(Duration.millis(config.settingsPollMs)))
              if (fingerprint(yield* Effect.orElseSucceed(values, () => ({}))) !== seen) return
            }
          })

        /** One run of the worker, until it returns, fails, or is interrupted (then aborted and given the grace). */
        const runOnce = (all: Record<string, string | undefined>) =>
          Effect.gen(function*() {
            const startedAt = Date.now()
            const failed = (error: unknown) => new WorkerFailed({ message: failureMessage(error), upMs: Date.now() - startedAt })
            const controller = new AbortController()
            const workerContext: WorkerContext = {
              name,
              signal: controller.signal,
              settings: Object.freeze({ ...all }),
              sleep: abortableSleep(controller.signal),
              report: (detail) => {
                byName.set(name, status = { ...status, detail: { ...detail } })
              },
              contact: (state, reason) => {
                const at = new Date().toISOString()
                const failing_since = state === "failing" ? (status.failing_since ?? at) : null
                byName.set(name, status = { ...status, contact: { state, reason: reason ?? null, at }, failing_since })
              }
            }
            yield* set({ state: "running", started_at: new Date().toISOString(), next_attempt_at: null })
            const started = yield* Effect.try({
              try: () => worker.run(context, workerContext),
              catch: failed
            })
            if (isEffect(started)) {
              return yield* started.pipe(
                Effect.mapError(failed),
                Effect.ensuring(Effect.sync(() => controller.abort()))
              )
            }
            const settled = Promise.resolve(started)
            return yield* Effect.async<void, WorkerFailed>((resume) => {
              settled.then(
                () => resume(Effect.void),
                (error) => resume(Effect.fail(failed(error)))
              )
              // Interrupted: tell the worker, and give it the grace to finish what it is doing.
              return Effect.promise(() => {
                controller.abort()
                return Promise.race([
                  settled.catch(() => undefined),
                  new Promise((resolve) => setTimeout(resolve, config.stopGraceMs).unref())
                ])
              })
            }).pipe(Effect.ensuring(Effect.sync(() => controller.abort())))
          })

        /** Each failure logged and shown in the status, with the end of the wait `workerRestarts` chose. */
        const restarts = workerRestarts(config.restartBaseMs, config.restartMaxMs).pipe(
          Schedule.tapOutput(([wait, failure]) => {
            const delay = Math.round(Duration.toMillis(wait))
            const at = new Date()
            return Effect.logError(`Integration ${integrationId} worker ${name} failed: ${failure.message}; restarting in ${delay} ms`)
              .pipe(
                Effect.annotateLogs({ integration: integrationId, worker: name }),
                Effect.zipRight(
                  set({
                    state: "backing_off",
                    restarts: status.restarts + 1,
                    last_error: { message: failure.message, at: at.toISOString() },
                    failing_since: status.failing_since ?? at.toISOString(),
                    next_attempt_at: new Date(at.getTime() + delay).toISOString()
                  })
                )
              )
          })
        )

        /** Runs, and after a failure runs again on `workerRestarts`, until a run returns. */
        const runWithRestarts = (all: Record<string, string | undefined>) => Effect.retry(runOnce(all), restarts)

        for (;;) {
          const all = yield* values
          const missing = required.filter((key) => all[key] === undefined)
          if (missing.length > 0) {
            yield* set({ state: "waiting_for_settings", missing_settings: missing, started_at: null, next_attempt_at: null })
            yield* settingsChange(fingerprint(all))
            continue
          }
          const seen = fingerprint(all)
          // New settings: what the last ones met says nothing about these.
          yield* set({ state: "starting", missing_settings: [], contact: null, failing_since: null })
          const body = Effect.zipRight(
            Effect.sleep(Duration.millis(worker.startDelayMs ?? 0)),
            worker.singleton
              ? leadership.lead(`integration:${integrationId}/${name}`, runWithRestarts(all), {
                onFollowing: set({ state: "leader_elsewhere", started_at: null }),
                onLeading: log(`Worker ${name} of ${integrationId} leads; starting`)
              })
              : runWithRestarts(all)
          )
          const ended = yield* Effect.raceFirst(Effect.as(body, "finished" as const), Effect.as(settingsChange(seen), "settings" as const))
          if (ended === "settings") {
            yield* log(`Settings of ${integrationId} changed; restarting worker ${name}`)
            continue
          }
          yield* set({ state: "finished" })
          yield* settingsChange(seen)
        }
      }).pipe(
        // The supervisor itself failing (the database, say) must not end the worker for good.
        Effect.catchAllCause((cause) => Effect.logError(`Integration ${integrationId} worker supervisor failed; restarting it`, cause)),
        Effect.repeat(supervisorRestart)
      )

    for (const state of integrations.loaded()) {
      for (const worker of state.workers) yield* Effect.forkScoped(supervise(state.id, state.loaded.manifest, state.context, worker))
    }
    // Expired store entries are never read; this only reclaims their rows.
    yield* Effect.forkScoped(
      store.sweepExpired.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Integration store sweep failed", cause)),
        Effect.repeat(storeSweepEvery)
      )
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const byName of statuses.values()) for (const [name, status] of byName) byName.set(name, { ...status, state: "stopped" })
      })
    )

    return { statuses: (integrationId: string) => [...(statuses.get(integrationId)?.values() ?? [])] }
  })
).pipe(Layer.provide(Layer.mergeAll(Integrations.Default, IntegrationSettings.Default, Leadership.Default, IntegrationStoreRepo.Default)))
