/**
 * Boots the whole server for a test: in this process on a free port (fast, the default), or as a
 * child process running `cairn serve` (for restarts, signals and crashes). Either way it runs
 * against a fresh PGlite or PostgreSQL database.
 */
import { HttpServer } from "@effect/platform"
import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { AppLive } from "../../src/main.ts"
import { type ClientCalls, clientCalls } from "./client.ts"
import { type Backend, createTestDatabase, tempDir, type TestDatabase } from "./database.ts"
import { processStartMs, scaled } from "./time.ts"

export const API_KEY = "test-static-key-0123456789"

/**
 * `client`, `call`, `attempt` and `failsWith` go through the typed client with the static key;
 * `as(token)` gives the same for another credential (a scoped key, a user's JWT, a widget token;
 * null for none). `request` stays for what a test asserts on the wire itself.
 */
export interface TestServer extends ClientCalls {
  readonly as: (token: string | null) => ClientCalls
  readonly baseUrl: string
  readonly port: number
  readonly apiKey: string
  readonly db: TestDatabase
  /** fetch against the server with the static key unless `auth` says otherwise. */
  readonly request: (path: string, init?: RequestInit & { auth?: string | null }) => Promise<Response>
  readonly close: () => Promise<void>
  /** Runs an effect with the server's own services (register a tool or a hook, read a service). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
}

export interface StartOptions {
  readonly backend: Backend
  /** Extra environment, as the server would read it (`RATE_LIMIT_ENABLED: "true"`). */
  readonly env?: Record<string, string>
  /** Reuse a database (restart tests); it is then not dropped on close. */
  readonly db?: TestDatabase
  /** Receives every log line the server writes. */
  readonly onLog?: (line: string) => void
}

const envFor = (db: TestDatabase, port: number, extra: Record<string, string> = {}): Record<string, string> => ({
  PORT: String(port),
  HOST: "127.0.0.1",
  API_KEY,
  DATA_DIR: db.dataDir,
  LOG_LEVEL: "warning",
  SHUTDOWN_GRACE_MS: "2000",
  // The tests use the bundled example integration; an install runs it only when asked.
  EXAMPLE_INTEGRATION: "true",
  ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}),
  ...extra
})

export const makeRequest = (baseUrl: string) => (p: string, init: RequestInit & { auth?: string | null } = {}) => {
  const { auth, ...rest } = init
  const headers = new Headers(rest.headers)
  const token = auth === undefined ? API_KEY : auth
  if (token !== null) headers.set("authorization", `Bearer ${token}`)
  if (rest.body !== undefined && typeof rest.body === "string" && !headers.has("content-type")) {
    headers.set("content-type", "application/json")
  }
  return fetch(`${baseUrl}${p}`, { ...rest, headers })
}

/** The server in this process, on a free port. */
export const startServer = async (options: StartOptions): Promise<TestServer> => {
  const db = options.db ?? (await createTestDatabase(options.backend, { migrated: true }))
  const env = envFor(db, 0, options.env)
  const scope = Effect.runSync(Scope.make())
  const logger = options.onLog
    ? Logger.replace(
      Logger.defaultLogger,
      Logger.map(Logger.logfmtLogger, (line) => options.onLog!(line))
    )
    : Layer.empty
  const layer = AppLive.pipe(
    Layer.provide(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
    Layer.provide(logger)
  )
  try {
    const { port, context } = await Effect.runPromise(
      Effect.gen(function*() {
        const context = yield* Layer.buildWithScope(layer, scope)
        const server = yield* Effect.provide(HttpServer.HttpServer, context)
        return { port: server.address._tag === "TcpAddress" ? server.address.port : 0, context }
      }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
    )
    const baseUrl = `http://127.0.0.1:${port}`
    return {
      ...clientCalls(baseUrl, API_KEY),
      as: (token) => clientCalls(baseUrl, token),
      baseUrl,
      port,
      apiKey: API_KEY,
      db,
      request: makeRequest(baseUrl),
      close: async () => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        if (!options.db) await db.drop()
      },
      run: (effect) => Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<any, any, never>)
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    if (!options.db) await db.drop()
    throw error
  }
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo
      server.close(() => resolve(address.port))
    })
  })

export interface ChildServer extends ClientCalls {
  readonly as: (token: string | null) => ClientCalls
  readonly baseUrl: string
  readonly process: ChildProcess
  readonly output: () => string
  readonly request: TestServer["request"]
  /** Sends a signal and waits for the exit code (null when killed by the signal). */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

const root = path.resolve(import.meta.dirname, "../..")

/**
 * How long `spawnServer` waits for /health (a process start, time.ts). A test that starts servers in
 * turn gives itself this much for each.
 */
export const spawnDeadlineMs = processStartMs

/**
 * `cairn serve` as a child process, waited on until /health answers; `nodeArgs` go to node itself
 * (a profiler flag, say); `serverRoot` is the checkout to run (a benchmark's baseline, say).
 */
export const spawnServer = async (
  db: TestDatabase,
  extraEnv: Record<string, string> = {},
  nodeArgs: ReadonlyArray<string> = [],
  serverRoot: string = root
): Promise<ChildServer> => {
  const port = await freePort()
  const child = spawn(process.execPath, [...nodeArgs, path.join(serverRoot, "bin/cairn.mjs"), "serve"], {
    cwd: serverRoot,
    env: { ...process.env, ...envFor(db, port, { LOG_LEVEL: "info", ...extraEnv }) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + spawnDeadlineMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Server exited during startup:\n${output}`)
    try {
      const response = await fetch(`${baseUrl}/health`)
      if (response.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`Server did not answer /health within ${spawnDeadlineMs} ms:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    ...clientCalls(baseUrl, API_KEY),
    as: (token) => clientCalls(baseUrl, token),
    baseUrl,
    process: child,
    output: () => output,
    request: makeRequest(baseUrl),
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}

/** `cairn <args>` as a child process to its end (killed after `spawnDeadlineMs`): its exit code and output. */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; output: string; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [path.join(root, "bin/cairn.mjs"), ...args], {
      cwd: tempDir(),
      env: { ...process.env, DATA_DIR: tempDir(), LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => ((output += chunk), (stdout += chunk)))
    child.stderr!.on("data", (chunk) => ((output += chunk), (stderr += chunk)))
    const timer = setTimeout(() => child.kill("SIGKILL"), spawnDeadlineMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output, stdout, stderr })
    })
  })

/** A message queued in a new session of its own, its answer POSTed to `url` (a webhook dispatch): its session and task. */
export const queueForWebhook = async (
  server: Pick<TestServer, "request">,
  content: string,
  options: { readonly url: string; readonly clientId: string }
) => {
  const created = await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: options.clientId }) })
  const session = (await json(created)).session_id as string
  const response = await server.request(`/api/v1/sessions/${session}/messages`, {
    method: "POST",
    body: JSON.stringify({ content, run_agent: true, notify: true, dispatch_type: "webhook", dispatch_config: { url: options.url } })
  })
  // Not vitest's expect: the benches import this file too.
  if (response.status !== 200) throw new Error(`Queueing the message answered ${response.status}: ${await response.text()}`)
  return { session, task: (await json(response)).task_id as string }
}

/** A response body as JSON, loosely typed for assertions. */
/** Whether a process is running (signal 0 tests it without touching it). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The processes whose parent is `pid` (from /proc): a launcher's server, a loader's service process. */
export const childPids = (pid: number): Array<number> =>
  fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
        // The command name in parentheses may hold spaces; the parent's pid is the 2nd field after it.
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid ? [Number(name)] : []
      } catch {
        return []
      }
    })

export const json = async (response: Response): Promise<any> => response.json()

/** The task once it has ended (neither pending nor running), read every 50 ms; throws after `timeoutMs` (scaled). */
export const taskEnded = async (server: Pick<TestServer, "request">, taskId: string, timeoutMs = 20_000): Promise<any> => {
  timeoutMs = scaled(timeoutMs)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const task = await json(await server.request(`/api/v1/tasks/${taskId}`))
    if (task.status !== "pending" && task.status !== "running") return task
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${task.status} after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
