/**
 * Background processes of integrations (`process.ts`: DESCRIPTION, CMD, REQUIRED_ENV). Each is
 * started only when every required name resolves (stored setting, environment, default), with the
 * integration's settings, AGENT_BASE_URL and AGENT_API_KEY in its environment; restarted after a
 * crash with exponential backoff; restarted when its settings change; stopped on shutdown. Its
 * output goes to the log, line by line.
 */
import { HttpServer } from "@effect/platform"
import { Config, Context, Deferred, Duration, Effect, Layer, Option, PubSub, Queue, Runtime, Schedule } from "effect"
import { spawn, type ChildProcess } from "node:child_process"
import { Integrations } from "./Integrations.ts"
import type { LoadedIntegration } from "./Loader.ts"
import { IntegrationSettings } from "./Settings.ts"

export type ProcessState = "not_applicable" | "waiting_for_settings" | "starting" | "running" | "restarting" | "stopped"

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
    Effect.gen(function* () {
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

/** Stops a child: SIGTERM, then SIGKILL after the grace period; resolves when it has exited. */
const stopChild = (child: ChildProcess, graceMs: number) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

export const ProcessesLive = Layer.scoped(
  ProcessManager,
  Effect.gen(function* () {
    const config = yield* processConfig
    const integrations = yield* Integrations
    const settings = yield* IntegrationSettings
    const listening = yield* ListeningAddress
    // Output and errors of children are logged through the server's own logger and level.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const statuses = new Map<string, ProcessStatus>()
    const changes = yield* PubSub.subscribe(settings.changes)
    const wakeups = new Map<string, Queue.Queue<void>>()

    // Route each settings change to the supervisor of that integration.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(changes), (id) => {
          const queue = wakeups.get(id)
          return queue ? Queue.offer(queue, undefined) : Effect.void
        })
      )
    )

    const supervise = (integration: LoadedIntegration & { process: NonNullable<LoadedIntegration["process"]> }) =>
      Effect.gen(function* () {
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
        let delay = config.restartBaseMs
        for (;;) {
          const resolved = yield* settings.resolve(integration.id, integration.manifest)
          const values = new Map(resolved.filter((s) => s.value !== undefined).map((s) => [s.key, s.value!]))
          for (const name of manifest.requiredEnv) {
            if (!values.has(name)) {
              const fromEnv = yield* settings.environment(name)
              if (fromEnv !== undefined) values.set(name, fromEnv)
            }
          }
          const lookup = (name: string) => values.get(name)
          const missing = manifest.requiredEnv.filter((name) => lookup(name) === undefined)
          if (missing.length > 0) {
            set({ state: "waiting_for_settings", missing_env: missing, pid: null })
            yield* Queue.take(wake)
            continue
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
          const child = spawn(command!, args, { cwd: integration.dir, env, stdio: ["ignore", "pipe", "pipe"] })
          const exited = yield* Deferred.make<{ code: number | null; signal: string | null }>()
          child.on("error", (error) => {
            runFork(Effect.logError(`Integration ${integration.id} process could not start: ${error.message}`))
            Effect.runFork(Deferred.succeed(exited, { code: null, signal: null }))
          })
          child.on("exit", (code, signal) => Effect.runFork(Deferred.succeed(exited, { code, signal })))
          const forward = (stream: NodeJS.ReadableStream | null, level: "info" | "warn") => {
            let buffer = ""
            stream?.on("data", (chunk) => {
              buffer += chunk
              let newline: number
              while ((newline = buffer.indexOf("\n")) >= 0) {
                const line = buffer.slice(0, newline)
                buffer = buffer.slice(newline + 1)
                const log = level === "info" ? Effect.logInfo(line) : Effect.logWarning(line)
                runFork(log.pipe(Effect.annotateLogs({ integration: integration.id, stream: level === "info" ? "stdout" : "stderr" })))
              }
            })
          }
          forward(child.stdout, "info")
          forward(child.stderr, "warn")
          const startedAt = Date.now()
          set({ state: "running", pid: child.pid ?? null, started_at: new Date(startedAt).toISOString() })
          // Whatever ends this attempt (exit, settings change, shutdown), the child is stopped.
          const outcome = yield* Effect.raceFirst(
            Effect.map(Deferred.await(exited), (exit) => ({ _tag: "exited" as const, exit })),
            Effect.as(Queue.take(wake), { _tag: "settings" as const })
          ).pipe(Effect.onInterrupt(() => stopChild(child, config.stopGraceMs)))
          if (outcome._tag === "settings") {
            yield* Effect.logInfo(`Integration ${integration.id}: settings changed, restarting its process`)
            yield* stopChild(child, config.stopGraceMs)
            lastExit = { ...(yield* Deferred.await(exited)), at: new Date().toISOString() }
            delay = config.restartBaseMs
            continue
          }
          lastExit = { ...outcome.exit, at: new Date().toISOString() }
          restarts += 1
          if (Date.now() - startedAt > config.restartMaxMs) delay = config.restartBaseMs
          yield* Effect.logWarning(
            `Integration ${integration.id} process exited (code ${outcome.exit.code}, signal ${outcome.exit.signal}); restarting in ${delay} ms`
          )
          set({ state: "restarting", pid: null })
          // A settings change during the backoff restarts at once.
          yield* Effect.raceFirst(Effect.sleep(Duration.millis(delay)), Queue.take(wake))
          delay = Math.min(delay * 2, config.restartMaxMs)
        }
      }).pipe(
        // A passing failure (the database, say) restarts the supervisor with backoff; it never
        // gives up on the process for good.
        Effect.tapErrorCause((cause) =>
          Effect.zipRight(
            Effect.logError(`Integration ${integration.id} process supervisor failed; restarting it`, cause),
            Effect.sync(() => {
              const current = statuses.get(integration.id)
              if (current) statuses.set(integration.id, { ...current, state: "restarting", pid: null })
            })
          )
        ),
        Effect.retry(Schedule.exponential(Duration.millis(config.restartBaseMs)).pipe(Schedule.union(Schedule.spaced(Duration.millis(config.restartMaxMs))))),
        Effect.catchAllCause(() => Effect.void)
      )

    for (const state of integrations.loaded()) {
      if (state.loaded.process) yield* Effect.forkScoped(supervise({ ...state.loaded, process: state.loaded.process }))
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
)
