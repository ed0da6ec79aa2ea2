/**
 * The live SDK object an integration receives (`IntegrationContext`): plain async functions over
 * Cairn's services, bound to the server that loaded the integration. Effect failures become
 * rejected promises with a readable message; nothing of Effect leaks into integration code.
 */
import { Cause, Effect, Exit, LogLevel, Runtime } from "effect"
import {
  type IntegrationContext,
  type IntegrationMetadata,
  InvalidArgument,
  type LruSet,
  type StartRunOptions,
  type Worker
} from "../sdk/index.ts"
import type { CallerIdentity, IntegrationCapabilities } from "./Capabilities.ts"
import { inboundFace } from "./InboundCapability.ts"
import type { IntegrationServicesShape } from "./Services.ts"

export interface ContextServices {
  readonly runtime: Runtime.Runtime<never>
  /** Whether a log line at this level would be written now (the running LOG_LEVEL). */
  readonly logEnabled: (level: LogLevel.LogLevel) => boolean
  readonly registerHook: IntegrationContext["registerHook"]
  readonly registerDispatcher: (integrationId: string) => IntegrationContext["registerDispatcher"]
  readonly settings: (integrationId: string) => IntegrationContext["settings"]
  readonly ingestDocument: (...args: Parameters<IntegrationContext["ingestDocument"]>) => Effect.Effect<string, unknown>
  readonly searchDocuments: (...args: Parameters<IntegrationContext["searchDocuments"]>) => Effect.Effect<ReadonlyArray<any>, unknown>
  readonly getOrCreateSession: (...args: Parameters<IntegrationContext["getOrCreateSession"]>) => Effect.Effect<string, unknown>
  readonly injectMessage: (
    ...args: Parameters<IntegrationContext["injectMessage"]>
  ) => Effect.Effect<{ message_id: string; session_id: string; task_id: string | null }, unknown>
  readonly workspace: IntegrationServicesShape["workspace"]
  readonly getBot: (botId: string) => Effect.Effect<{ id: string; name: string } | null, unknown>
  readonly capabilities: IntegrationCapabilities
  /** Who the integration is, as its capabilities need to know (type, dispatchers, configured hosts). */
  readonly caller: (integrationId: string) => CallerIdentity
  readonly registerWorker: (integrationId: string) => (worker: Worker) => void
}

/** An Effect failure as the Error an integration's `catch` sees; a refused input is an `InvalidArgument`. */
const asError = (cause: Cause.Cause<unknown>): Error => {
  const error = Cause.squash(cause)
  const message = failureMessage(error)
  return (error as { _tag?: unknown })?._tag === "ValidationError" ? new InvalidArgument(message) : new Error(message)
}

// Argument checks: a refused argument is a TypeError, before anything reaches the database.
const maxKey = 512
const maxMember = 1024
const maxTtlMs = 10 * 365 * 24 * 3600 * 1000
const maxCapacity = 1_000_000

const checkText = (what: string, value: unknown, max: number): string => {
  if (typeof value !== "string" || value.length === 0 || value.length > max || value.includes("\0")) {
    throw new InvalidArgument(`${what} must be a string of 1 to ${max} characters without NUL`)
  }
  return value
}

const checkContent = (what: string, value: unknown): string => {
  if (typeof value !== "string" || value.includes("\0")) throw new InvalidArgument(`${what} must be a string without NUL`)
  return value
}

const imageTypes: ReadonlyArray<string> = ["image/png", "image/jpeg", "image/gif", "image/webp"]
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** A run's images: a known image type, a name, and standard base64 bytes. */
const checkImages = (images: StartRunOptions["images"]): void => {
  if (images === undefined) return
  if (!Array.isArray(images)) throw new InvalidArgument("images must be a list")
  for (const image of images) {
    if (!imageTypes.includes(image?.mime_type)) throw new InvalidArgument(`images: mime_type must be one of ${imageTypes.join(", ")}`)
    checkText("images: name", image.name, 255)
    if (typeof image.data !== "string" || image.data.length === 0 || !base64.test(image.data)) {
      throw new InvalidArgument("images: data must be the file in standard base64 (no data: prefix, no line breaks)")
    }
  }
}

const checkTtl = (options: { readonly ttlMs?: number } | undefined): number | undefined => {
  const ttl = options?.ttlMs
  if (ttl === undefined) return undefined
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > maxTtlMs) {
    throw new InvalidArgument(`ttlMs must be a whole number of milliseconds, 1 to ${maxTtlMs}`)
  }
  return ttl
}

/** A value as the store keeps it: its JSON text. */
const jsonText = (what: string, value: unknown): string => {
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (cause) {
    throw new InvalidArgument(`${what} cannot be stored as JSON: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  if (text === undefined) throw new InvalidArgument(`${what} cannot be stored as JSON (undefined, a function or a symbol)`)
  return text
}

export const makeContext = (
  id: string,
  services: ContextServices,
  onMetadata: (metadata: IntegrationMetadata) => void
): IntegrationContext => {
  const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> =>
    Runtime.runPromiseExit(services.runtime)(effect).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      throw asError(exit.cause)
    })
  const log = (level: LogLevel.LogLevel) => (message: string, data?: Record<string, unknown>) => {
    // A line below the running level forks nothing (integrations log on hot paths: every turn's hook).
    if (!services.logEnabled(level)) return
    Runtime.runFork(services.runtime)(
      Effect.logWithLevel(level, message).pipe(Effect.annotateLogs({ integration: id, ...(data ?? {}) }))
    )
  }
  return {
    id,
    logger: { debug: log(LogLevel.Debug), info: log(LogLevel.Info), warn: log(LogLevel.Warning), error: log(LogLevel.Error) },
    registerHook: services.registerHook,
    registerMetadata: (metadata) => {
      if (!metadata || typeof metadata.integration_type !== "string" || typeof metadata.client_id_prefix !== "string") {
        throw new InvalidArgument("registerMetadata needs integration_type and client_id_prefix (strings)")
      }
      for (const key of ["user_attribution", "display_name", "dispatch_config"] as const) {
        if (metadata[key] !== undefined && typeof metadata[key] !== "function") {
          throw new InvalidArgument(`registerMetadata: ${key} must be a function`)
        }
      }
      if (metadata.dispatch_type !== undefined && (typeof metadata.dispatch_type !== "string" || metadata.dispatch_type === "")) {
        throw new InvalidArgument("registerMetadata: dispatch_type must be a non-empty string")
      }
      onMetadata(metadata)
    },
    registerDispatcher: services.registerDispatcher(id),
    settings: services.settings(id),
    ingestDocument: (...args) => run(services.ingestDocument(...args)),
    searchDocuments: (...args) => run(services.searchDocuments(...args)),
    getOrCreateSession: (...args) => run(services.getOrCreateSession(...args)),
    injectMessage: (...args) => run(services.injectMessage(...args)),
    workspace: {
      list: (channelId) => run(services.workspace.list(channelId)),
      read: (channelId, path) => run(services.workspace.read(channelId, path)),
      write: (channelId, path, content) => run(services.workspace.write(channelId, path, content)),
      remove: (channelId, path) => run(services.workspace.remove(channelId, path))
    },
    getBot: (botId) => run(services.getBot(botId)),
    registerWorker: services.registerWorker(id),
    ...capabilitiesOf(services.capabilities, services.caller(id), run)
  }
}

type Capabilities = Pick<IntegrationContext, "store" | "llm" | "channels" | "runs" | "http" | "overview" | "todos" | "inbound">

/** The promise face of the capabilities, bound to one caller. */
const capabilitiesOf = (
  capabilities: IntegrationCapabilities,
  caller: CallerIdentity,
  run: <A>(effect: Effect.Effect<A, unknown>) => Promise<A>
): Capabilities => {
  const id = caller.id
  const call = <A>(check: () => Effect.Effect<A, unknown>): Promise<A> => {
    try {
      return run(check())
    } catch (error) {
      return Promise.reject(error)
    }
  }
  const lru = (name: string, capacity: number): LruSet => {
    checkText("An LRU set's name", name, maxKey)
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > maxCapacity) {
      throw new InvalidArgument(`An LRU set's capacity must be a whole number from 1 to ${maxCapacity}`)
    }
    return {
      name,
      capacity,
      add: (member) => call(() => capabilities.store.lruAdd(id, name, checkText("A member", member, maxMember), capacity)),
      has: (member) => call(() => capabilities.store.lruHas(id, name, checkText("A member", member, maxMember))),
      remove: (member) => call(() => capabilities.store.lruRemove(id, name, checkText("A member", member, maxMember))),
      members: () => call(() => capabilities.store.lruMembers(id, name, capacity))
    }
  }
  return {
    store: {
      get: <T>(key: string) =>
        call(() =>
          Effect.map(
            capabilities.store.get(id, checkText("A key", key, maxKey)),
            (text) => (text === undefined ? undefined : (JSON.parse(text) as T))
          )
        ),
      set: (key, value, options) =>
        call(() => capabilities.store.set(id, checkText("A key", key, maxKey), jsonText("The value", value), checkTtl(options))),
      delete: (key) => call(() => capabilities.store.remove(id, checkText("A key", key, maxKey))),
      compareAndSet: (key, expected, next, options) =>
        call(() =>
          capabilities.store.compareAndSet(
            id,
            checkText("A key", key, maxKey),
            expected === undefined ? undefined : jsonText("The expected value", expected),
            jsonText("The new value", next),
            checkTtl(options)
          )
        ),
      keys: (prefix = "") => call(() => capabilities.store.keys(id, typeof prefix === "string" ? prefix : "", 1000)),
      lru
    },
    llm: {
      complete: (options) =>
        call(() => {
          if (!options || !Array.isArray(options.messages) || options.messages.length === 0) {
            throw new InvalidArgument("complete needs messages (a non-empty list)")
          }
          options.messages.forEach((m, i) => checkContent(`messages[${i}].content`, m?.content))
          return capabilities.complete(caller, options)
        }),
      transcribe: (options) =>
        call(() => {
          if (!(options?.audio instanceof Uint8Array) || options.audio.length === 0) {
            throw new InvalidArgument("transcribe needs audio (non-empty bytes)")
          }
          return capabilities.transcribe(caller, options)
        })
    },
    channels: {
      bound: (options) => call(() => capabilities.boundChannels(caller, options?.clientId)),
      storePassive: (channelId, content, options) =>
        call(() =>
          capabilities.storePassive(
            caller,
            checkText("channelId", channelId, 64),
            checkContent("content", content),
            options?.metadata ?? {}
          )
        ),
      writeFile: (channelId, path, content) =>
        call(() =>
          capabilities.writeFile(
            caller,
            checkText("channelId", channelId, 64),
            checkText("path", path, 1024),
            checkContent("content", content)
          )
        )
    },
    runs: {
      start: (options) =>
        call(() => {
          checkText("channelId", options?.channelId, 64)
          checkContent("content", options.content)
          checkImages(options.images)
          return capabilities.startRun(caller, options)
        }),
      result: (taskId, options) => call(() => capabilities.runResult(checkText("taskId", taskId, 64), options?.timeoutMs)),
      run: (options) =>
        call(() => {
          checkText("channelId", options?.channelId, 64)
          checkContent("content", options.content)
          checkImages(options.images)
          return Effect.flatMap(capabilities.startRun(caller, options), (started) =>
            capabilities.runResult(started.task_id, options.timeoutMs))
        }),
      cancelQueued: (options) => call(() => capabilities.cancelQueued(caller, options?.channelId))
    },
    http: {
      request: (url, options = {}) => call(() => capabilities.request(caller, checkText("url", url, 8192), options))
    },
    overview: () => call(() => capabilities.overview(caller)),
    todos: {
      list: (filter) => call(() => capabilities.todos.list(filter)),
      add: (todo) =>
        call(() => {
          checkText("title", todo?.title, 1000)
          return capabilities.todos.add(caller, todo)
        }),
      complete: (id) => call(() => capabilities.todos.complete(checkText("id", id, 64)))
    },
    inbound: inboundFace(capabilities.inbound, caller, call)
  }
}

/** A failure's readable message (`detail` of a tagged error, else `message`). */
export const failureMessage = (error: unknown): string => {
  const failure = error as { detail?: unknown; message?: unknown }
  if (typeof failure?.detail === "string") return failure.detail
  if (Array.isArray(failure?.detail)) {
    return failure.detail.map((issue: { loc?: unknown; msg?: unknown }) => `${JSON.stringify(issue.loc)}: ${issue.msg}`).join("; ")
  }
  return typeof failure?.message === "string" ? failure.message : String(error)
}
