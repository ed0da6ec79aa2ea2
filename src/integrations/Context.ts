/**
 * The live SDK object an integration receives (`IntegrationContext`): plain async functions over
 * Cairn's services, bound to the server that loaded the integration. Effect failures become
 * rejected promises with a readable message; nothing of Effect leaks into integration code.
 */
import { Cause, Effect, Exit, Runtime } from "effect"
import type { IntegrationContext, IntegrationMetadata } from "../sdk/index.ts"
import type { IntegrationServicesShape } from "./Services.ts"

export interface ContextServices {
  readonly runtime: Runtime.Runtime<never>
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
}

/** An Effect failure as the Error an integration's `catch` sees. */
const asError = (cause: Cause.Cause<unknown>): Error => {
  const failure = Cause.squash(cause) as { detail?: unknown; message?: unknown }
  const detail =
    typeof failure?.detail === "string"
      ? failure.detail
      : Array.isArray(failure?.detail)
        ? failure.detail.map((issue: { loc?: unknown; msg?: unknown }) => `${JSON.stringify(issue.loc)}: ${issue.msg}`).join("; ")
        : typeof failure?.message === "string"
          ? failure.message
          : String(failure)
  return new Error(detail)
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
  const log = (level: "Debug" | "Info" | "Warning" | "Error") => (message: string, data?: Record<string, unknown>) => {
    const effect =
      level === "Debug" ? Effect.logDebug(message) : level === "Info" ? Effect.logInfo(message) : level === "Warning" ? Effect.logWarning(message) : Effect.logError(message)
    Runtime.runFork(services.runtime)(
      effect.pipe(Effect.annotateLogs({ integration: id, ...(data ?? {}) }))
    )
  }
  return {
    id,
    logger: { debug: log("Debug"), info: log("Info"), warn: log("Warning"), error: log("Error") },
    registerHook: services.registerHook,
    registerMetadata: (metadata) => {
      if (!metadata || typeof metadata.integration_type !== "string" || typeof metadata.client_id_prefix !== "string") {
        throw new TypeError("registerMetadata needs integration_type and client_id_prefix (strings)")
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
    getBot: (botId) => run(services.getBot(botId))
  }
}
