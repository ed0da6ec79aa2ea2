/**
 * Background processes of integrations (`process.ts`: DESCRIPTION, CMD, REQUIRED_ENV). Each is
 * started only when every required name resolves (stored setting, environment, default), with the
 * integration's settings, AGENT_BASE_URL and AGENT_API_KEY in its environment; restarted after a
 * crash with exponential backoff; restarted when its own settings change (a save of another
 * integration's leaves it running); stopped on shutdown. Its
 * output goes to the log, line by line.
 */
import { Command, CommandExecutor, HttpServer } from "@effect/platform"
import { NodeCommandExecutor, NodeFileSystem } from "@effect/platform-node"
import {
  Cause,
  Config,
  Context,
  Data,
  Deferred,
  Duration,
  Effect,
  Either,
  Fiber,
  Layer,
  Option,
  PubSub,
  Queue,
  Schedule,
  Stream
} from "effect"
import { Leadership } from "../db/Leadership.ts"
import { Integrations } from "./Integrations.ts"
import type { LoadedIntegration } from "./Loader.ts"
import { IntegrationSettings } from "./Settings.ts"

/** `leader_elsewhere`: another server process on the database runs it (one in all, by the leader lock). */
export type ProcessState =
  | "not_applicable"
  | "waiting_for_settings"
  | "starting"
  | "running"
  | "restarting"
  | "stopped"
  | "leader_elsewhere"

export interface ProcessStatus {
  readonly state: ProcessState
  readonly description: string
  readonly cmd: ReadonlyArray<string>
  readonly required_env: ReadonlyArray<string>
  readonly missing_env: ReadonlyArray<string>
  readonly pid: number | null
  readonly restarts: number
  readonly started_at: string | null
  readonly last_exit: { readonly code: number | null; readonly signal: string | null; readonly at: string } | null
}

const processConfig = Config.all({
  agentBaseUrl: Config.option(Config.string("AGENT_BASE_URL")),
  restartBaseMs: Config.integer("PROCESS_RESTART_BASE_MS").pipe(Config.withDefault(1000)),
  restartMaxMs: Config.integer("PROCESS_RESTART_MAX_MS").pipe(Config.withDefault(60_000)),
  stopGraceMs: Config.integer("PROCESS_STOP_GRACE_MS").pipe(Config.withDefault(5000))
})

/**
 * The server's own address for AGENT_BASE_URL, known only once the HTTP server listens (port 0
 * binds any free port); processes wait for it.
 */
export class ListeningAddress extends Context.Tag("cairn/ListeningAddress")<ListeningAddress, Deferred.Deferred<string>>() {
  static readonly layer = Layer.effect(ListeningAddress, Deferred.make<string>())
  /** Completes the address from the listening server. */
  static readonly publish = Layer.effectDiscard(
    Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      const deferred = yield* ListeningAddress
      const address = server.address
      yield* Deferred.succeed(deferred, address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "http://127.0.0.1:8000")
    })
  )
}

/** The parts of the server's environment a child process may inherit. */
const inheritable = ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR", "SHELL", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"]
export const inheritedEnv = (): Record<string, string> =>
  Object.fromEntries(inheritable.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])))

export class ProcessManager extends Effect.Tag("cairn/ProcessManager")<
  ProcessManager,
  { readonly status: (integrationId: string) => Option.Option<ProcessStatus> }
>() {}

/** How long the output of an exited child may take to drain into the log. */
const outputDrain = Duration.seconds(1)

/** How a child ended: its exit code, or the signal that ended it. */
interface ChildExit {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * Waits for the child's end. The platform answers an exit by signal as a failure whose message
 * names the signal (its only carrier of it), so the signal is read from there.
 */
const awaitExit = (child: CommandExecutor.Process): Effect.Effect<ChildExit> =>
  Effect.match(child.exitCode, {
    onSuccess: (code) => ({ code, signal: null }),
    onFailure: (error) => ({ code: null, signal: /signal: (\w+)/.exec(error.message)?.[1] ?? null })
  })

/** A run of the process ended: how the child exited, after `upMs` running (0: it did not start). */
class ProcessExited extends Data.TaggedError("ProcessExited")<{ readonly exit: ChildExit; readonly upMs: number }> {}

/** A round of the supervisor failed on its own (the database, say), not the process. */
class SupervisorFailed extends Data.TaggedError("SupervisorFailed")<{ readonly cause: Cause.Cause<unknown> }> {}

/**
 * Between the rounds of an integration's process: PROCESS_RESTART_BASE_MS doubling up to
 * PROCESS_RESTART_MAX_MS, starting over after a run that stayed up longer than that; a failure of
 * the supervisor's own waits the same way, so it never gives up on the process for good. Answers
 * each wait with what ended the round.
 */
const processRestarts = (baseMs: number, maxMs: number) =>
  Schedule.exponential(Duration.millis(baseMs)).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(maxMs))),
    Schedule.delays,
    Schedule.intersect(Schedule.identity<ProcessExited | SupervisorFailed>()),
    Schedule.resetWhen(([, ended]) => ended._tag === "ProcessExited" && ended.upMs > maxMs)
  )

/** Stops a child: SIGTERM, then SIGKILL after the grace period; answers when it has exited. */
const stopChild = (child: CommandExecutor.Process, graceMs: number) =>
  child.kill("SIGTERM").pipe(
    Effect.timeout(Duration.millis(graceMs)),
    Effect.catchAll(() => Effect.ignore(child.kill("SIGKILL")))
  )

/** Each line a stream of the child writes, logged at `level` with the integration's name. */
const logLines = (output: Stream.Stream<Uint8Array, unknown>, integrationId: string, level: "info" | "warn") =>
  output.pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.runForEach((line) =>
      (level === "info" ? Effect.logInfo(line) : Effect.logWarning(line)).pipe(
        Effect.annotateLogs({ integration: integrationId, stream: level === "info" ? "stdout" : "stderr" })
      )
    ),
    Effect.ignore
  )

export const ProcessesLive = Layer.scoped(
  ProcessManager,
  Effect.gen(function*() {
    const config = yield* processConfig
    const integrations = yield* Integrations
    const settings = yield* IntegrationSettings
    const leadership = yield* Leadership
    const listening = yield* ListeningAddress
    const statuses = new Map<string, ProcessStatus>()
    const changes = yield* PubSub.subscribe(settings.changes)
    const wakeups = new Map<string, Queue.Queue<void>>()

    // Route each settings change to the supervisor of that integration.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(changes), (id) => {
          // "*": another process changed some integration's settings.
          const queues = id === "*" ? [...wakeups.values()] : wakeups.has(id) ? [wakeups.get(id)!] : []
          return Effect.forEach(queues, (queue) => Queue.offer(queue, undefined), { discard: true })
        })
      )
    )

    const supervise = (integration: LoadedIntegration & { process: NonNullable<LoadedIntegration["process"]> }) =>
      Effect.gen(function*() {
        const manifest = integration.process
        const wake = yield* Queue.sliding<void>(1)
        wakeups.set(integration.id, wake)
        const base = { description: manifest.description, cmd: manifest.cmd, required_env: manifest.requiredEnv }
        let restarts = 0
        let lastExit: ProcessStatus["last_exit"] = null
        const set = (patch: Partial<ProcessStatus>) =>
          statuses.set(integration.id, {
            state: "stopped",
            missing_env: [],
            pid: null,
            started_at: null,
            ...statuses.get(integration.id),
            ...base,
            restarts,
            last_exit: lastExit,
            ...patch
          })
        const exited = (exit: ChildExit) => {
          lastExit = { ...exit, at: new Date().toISOString() }
        }

        /** The settings the process runs with: the integration's, and each required name the manifest does not declare from the environment. */
        const desired = Effect.gen(function*() {
          const resolved = yield* settings.resolve(integration.id, integration.manifest)
          const values = new Map(resolved.filter((s) => s.value !== undefined).map((s) => [s.key, s.value!]))
          for (const name of manifest.requiredEnv) {
            if (!values.has(name)) {
              const fromEnv = yield* settings.environment(name)
              if (fromEnv !== undefined) values.set(name, fromEnv)
            }
          }
          return values
        })
        const fingerprint = (values: ReadonlyMap<string, string>) => JSON.stringify([...values].sort(([a], [b]) => (a < b ? -1 : 1)))
        /** What the current round read (undefined before the first). */
        let runningWith: string | undefined

        /**
         * Completes when a notice comes and the settings now differ from what the round runs with:
         * a save of another integration's settings (announced as "*" through the bus) leaves this
         * process alone. A failed read is no change (the next notice looks again).
         */
        const settingsChanged = Effect.gen(function*() {
          for (;;) {
            yield* Queue.take(wake)
            const now = yield* Effect.option(desired)
            if (Option.isSome(now) && fingerprint(now.value) !== runningWith) return
          }
        })

        /**
         * One round: the settings as they are now, then the child until it exits (`ProcessExited`).
         * Answers `missing` when a required name has no value. Anything else failing (the
         * database, a key that cannot be made) is `SupervisorFailed`.
         */
        const round = Effect.gen(function*() {
          const values = yield* desired
          runningWith = fingerprint(values)
          const lookup = (name: string) => values.get(name)
          const missing = manifest.requiredEnv.filter((name) => lookup(name) === undefined)
          if (missing.length > 0) {
            set({ state: "waiting_for_settings", missing_env: missing, pid: null })
            return "missing" as const
          }
          set({ state: "starting", missing_env: [] })
          const baseUrl = Option.isSome(config.agentBaseUrl) ? config.agentBaseUrl.value : yield* Deferred.await(listening)
          const apiKey = yield* settings.processApiKey(integration.id, integration.manifest)
          // Only what a process needs: never the server's own secrets (API_KEY, JWT_SECRET,
          // DATABASE_URL, provider keys) through inheritance.
          const env: Record<string, string> = {
            ...inheritedEnv(),
            ...Object.fromEntries(values),
            ...Object.fromEntries(manifest.requiredEnv.map((name) => [name, lookup(name)!])),
            AGENT_BASE_URL: baseUrl,
            AGENT_API_KEY: apiKey,
            CAIRN_INTEGRATION_ID: integration.id
          }
          const [command, ...args] = manifest.cmd
          // One attempt: the child lives in this scope, so however the attempt ends (exit, settings
          // change, shutdown) the child is stopped and its output readers end with it.
          return yield* Effect.scoped(
            Effect.gen(function*() {
              const started = yield* Command.make(command!, ...args).pipe(
                Command.workingDirectory(integration.dir),
                Command.env(env, { extendEnv: false }),
                Command.start,
                Effect.either
              )
              if (Either.isLeft(started)) {
                yield* Effect.logError(`Integration ${integration.id} process could not start: ${started.left.message}`)
                return yield* new ProcessExited({ exit: { code: null, signal: null }, upMs: 0 })
              }
              const child = started.right
              const startedAt = Date.now()
              const readers = yield* Effect.forkScoped(
                Effect.all([logLines(child.stdout, integration.id, "info"), logLines(child.stderr, integration.id, "warn")], {
                  concurrency: 2,
                  discard: true
                })
              )
              set({ state: "running", pid: child.pid, started_at: new Date(startedAt).toISOString() })
              // Stopped from outside (its settings changed, or shutdown): its exit is recorded.
              const exit = yield* awaitExit(child).pipe(
                Effect.onInterrupt(() => stopChild(child, config.stopGraceMs).pipe(Effect.zipRight(awaitExit(child)), Effect.map(exited)))
              )
              // What the child wrote before it exited is still logged (its pipes close soon after).
              yield* Effect.ignore(Effect.timeout(Fiber.join(readers), outputDrain))
              return yield* new ProcessExited({ exit, upMs: Date.now() - startedAt })
            })
          )
        }).pipe(
          Effect.catchAllCause((cause) => {
            const failure = Cause.failureOption(cause)
            return Effect.fail(
              Option.isSome(failure) && failure.value instanceof ProcessExited ? failure.value : new SupervisorFailed({ cause })
            )
          })
        )

        /** Each wait of `processRestarts`, told: an exit is counted, recorded and logged; a failure of its own is logged. */
        const restartsTold = processRestarts(config.restartBaseMs, config.restartMaxMs).pipe(
          Schedule.tapOutput(([wait, ended]) =>
            Effect.suspend(() => {
              if (ended._tag === "SupervisorFailed") {
                set({ state: "restarting", pid: null })
                return Effect.logError(`Integration ${integration.id} process supervisor failed; restarting it`, ended.cause)
              }
              exited(ended.exit)
              restarts += 1
              set({ state: "restarting", pid: null })
              return Effect.logWarning(
                `Integration ${integration.id} process exited (code ${ended.exit.code}, signal ${ended.exit.signal}); restarting in ${
                  Math.round(Duration.toMillis(wait))
                } ms`
              )
            })
          )
        )

        // Rounds on `processRestarts` until the settings change, which cuts a run or a wait short
        // and starts again at once with the new values (and a fresh backoff).
        for (;;) {
          const ended = yield* Effect.raceFirst(Effect.retry(round, restartsTold), Effect.as(settingsChanged, "settings" as const))
          if (ended === "settings") {
            yield* Effect.logInfo(`Integration ${integration.id}: settings changed, restarting its process`)
            continue
          }
          // A required setting is missing: nothing runs until the settings change.
          yield* settingsChanged
        }
      }).pipe(
        // `processRestarts` never ends: only a defect of the supervisor's own loop stops it.
        Effect.catchAllCause((cause) => Effect.logError(`Integration ${integration.id} process supervisor stopped`, cause))
      )

    // One process in all runs each integration's process: the holder of its leader lock.
    for (const state of integrations.loaded()) {
      const process = state.loaded.process
      if (!process) continue
      const id = state.loaded.id
      yield* Effect.forkScoped(
        leadership.lead(`process:${id}`, supervise({ ...state.loaded, process }), {
          onFollowing: Effect.sync(() =>
            statuses.set(id, {
              state: "leader_elsewhere",
              description: process.description,
              cmd: process.cmd,
              required_env: process.requiredEnv,
              missing_env: [],
              pid: null,
              restarts: 0,
              started_at: null,
              last_exit: null
            })
          ),
          onLeading: Effect.logDebug(`Leading integration ${id}'s process`)
        })
      )
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const [id, status] of statuses) statuses.set(id, { ...status, state: "stopped", pid: null })
      })
    )

    return {
      status: (integrationId) => {
        const status = statuses.get(integrationId)
        if (status) return Option.some(status)
        return Option.map(integrations.get(integrationId), (state) => ({
          state: "not_applicable" as const,
          description: "",
          cmd: [],
          required_env: [],
          missing_env: [],
          pid: null,
          restarts: 0,
          started_at: null,
          last_exit: null,
          ...(state.loaded?.process ? { state: "stopped" as const } : {})
        }))
      }
    }
  })
).pipe(
  // Children are started through the platform's command executor (its own process group each, so
  // a stop reaches a child's children too).
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer),
  Layer.provide(Layer.mergeAll(Integrations.Default, IntegrationSettings.Default, Leadership.Default))
)
