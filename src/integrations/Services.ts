/**
 * The services behind the SDK that live in other domains: dispatchers, message injection,
 * workspaces and carapaces, gathered so the integration layer has one dependency on them.
 */
import { Context, Effect, Layer, Runtime } from "effect"
import { Carapaces } from "../carapaces/Carapaces.ts"
import type { Dispatcher, InjectOptions } from "../sdk/index.ts"
import { Dispatchers } from "../tasks/delivery/index.ts"
import { Injector } from "../tasks/Injection.ts"
import { Workspaces } from "../workspaces/Workspaces.ts"

export interface IntegrationServicesShape {
  /** Throws the contract error at once, so the integration's dispatcher.ts fails to load visibly. */
  readonly registerDispatcher: (integrationId: string, type: string, dispatcher: Dispatcher) => void
  readonly injectMessage: (
    sessionId: string,
    content: string,
    options: InjectOptions
  ) => Effect.Effect<{ message_id: string; session_id: string; task_id: string | null }, unknown>
  readonly workspace: {
    readonly list: (channelId: string) => Effect.Effect<ReadonlyArray<{ path: string; size: number }>, unknown>
    readonly read: (channelId: string, path: string) => Effect.Effect<string, unknown>
    readonly write: (channelId: string, path: string, content: string) => Effect.Effect<void, unknown>
    readonly remove: (channelId: string, path: string) => Effect.Effect<void, unknown>
  }
  readonly registerCarapaces: (integrationId: string, dir: string) => Effect.Effect<void, unknown>
  readonly activateCarapaces: (integrationId: string, carapaceIds: ReadonlyArray<string>) => Effect.Effect<void, unknown>
  readonly declareCompatibleTemplates: (integrationId: string, templateIds: ReadonlyArray<string>) => Effect.Effect<void>
}

export class IntegrationServices extends Context.Tag("cairn/IntegrationServices")<IntegrationServices, IntegrationServicesShape>() {}

export const layer = Layer.effect(
  IntegrationServices,
  Effect.gen(function*() {
    const dispatchers = yield* Dispatchers
    const injector = yield* Injector
    const workspaces = yield* Workspaces
    const carapaces = yield* Carapaces
    // The server's runtime, not the default one: its loggers hold LOG_LEVEL and the output format.
    const runSync = Runtime.runSync(yield* Effect.runtime<never>())
    return {
      registerDispatcher: (integrationId, type, dispatcher) =>
        runSync(
          dispatchers.register(type, dispatcher).pipe(
            Effect.tap(() => Effect.logInfo(`Integration ${integrationId} registered the dispatcher ${type}`))
          )
        ),
      injectMessage: (sessionId, content, options) =>
        injector.inject(sessionId, {
          content,
          source: options.source ?? "integration",
          runAgent: options.runAgent ?? false,
          notify: options.notify ?? false,
          executionConfig: options.executionConfig
        }),
      workspace: {
        list: (channelId) =>
          Effect.map(workspaces.list(channelId), (listing) => listing.files.map((f) => ({ path: f.path, size: f.size }))),
        read: (channelId, path) =>
          Effect.map(
            workspaces.read(channelId, path),
            (file) => file.encoding === "utf8" ? file.content : Buffer.from(file.content, "base64").toString("utf8")
          ),
        write: (channelId, path, content) => Effect.asVoid(workspaces.write(channelId, path, content)),
        remove: (channelId, path) => Effect.asVoid(workspaces.remove(channelId, path))
      },
      registerCarapaces: (integrationId, dir) => carapaces.registerFromDirectory(dir, `integration:${integrationId}`),
      activateCarapaces: (integrationId, ids) => carapaces.activate(integrationId, ids),
      declareCompatibleTemplates: (integrationId, ids) => workspaces.declareCompatibleTemplates(integrationId, ids)
    }
  })
).pipe(Layer.provide(Layer.mergeAll(Dispatchers.Default, Injector.Default, Workspaces.Default, Carapaces.Default)))
