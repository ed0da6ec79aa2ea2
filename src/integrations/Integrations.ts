/**
 * The integrations of this server: discovered and loaded at startup, their tools, skills, hooks
 * and dispatchers registered, their routes turned into API groups. An integration that fails to
 * load (or whose registration throws) is logged and left out; the server starts without it.
 */
import { Config, Effect, Option, Runtime } from "effect"
import { layer as ToolRegistryLive, ToolRegistry } from "../agent/Tools.ts"
import { BotFilesSync, Bots } from "../bots/Bots.ts"
import { CarapaceFilesSync } from "../carapaces/Carapaces.ts"
import { ClientPrefixes } from "../channels/ClientPrefixes.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Documents } from "../documents/Documents.ts"
import { Hooks } from "../hooks/Hooks.ts"
import type { IntegrationContext, IntegrationMetadata, Worker } from "../sdk/index.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { layer as SkillLibraryLive, readSkillDir, SkillLibrary } from "../skills/Skills.ts"
import { LogLevelControl } from "../telemetry/Logging.ts"
import { traced } from "../telemetry/Spans.ts"
import { IntegrationCapabilities } from "./Capabilities.ts"
import { type ContextServices, makeContext } from "./Context.ts"
import { type Candidate, discover, projectIntegrationsDir, searchDirs } from "./Discovery.ts"
import { checkWorker, checkWorkerNames, load, type LoadedIntegration } from "./Loader.ts"
import { type NormalizedSidebar, uniqueSidebars } from "./Manifest.ts"
import { IntegrationServices, layer as IntegrationServicesLive } from "./Services.ts"
import { IntegrationSettings, statusOf } from "./Settings.ts"

export interface IntegrationState {
  readonly id: string
  readonly dir: string
  readonly overrides: ReadonlyArray<string>
  readonly loaded: LoadedIntegration | null
  readonly error: string | null
  readonly metadata: IntegrationMetadata | null
  readonly context: IntegrationContext | null
  readonly parts: ReadonlyArray<string>
  /** From worker.ts and `registerWorker`. */
  readonly workers: ReadonlyArray<Worker>
}

/** The contract parts an integration has; `workers` counts those registered from hooks.ts too. */
const partsOf = (integration: LoadedIntegration, workers: number): Array<string> => [
  ...(integration.routes.length > 0 ? ["router"] : []),
  ...(integration.dispatchers ? ["dispatcher"] : []),
  ...(integration.hooks ? ["hooks"] : []),
  ...(integration.process ? ["process"] : []),
  ...(workers > 0 ? ["worker"] : []),
  ...(integration.manifest.env_vars.length > 0 || integration.manifest.sidebar_section ? ["setup"] : []),
  ...(integration.hasConfig ? ["config"] : []),
  ...(integration.tools.length > 0 ? ["tools"] : []),
  ...(integration.skillsDir ? ["skills"] : []),
  ...(integration.carapacesDir ? ["carapaces"] : [])
]

export class Integrations extends Effect.Service<Integrations>()("cairn/Integrations", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const tools = yield* ToolRegistry
    const skills = yield* SkillLibrary
    const clientPrefixes = yield* ClientPrefixes
    const hooks = yield* Hooks
    const settings = yield* IntegrationSettings
    const sessions = yield* Sessions
    const documents = yield* Documents
    const bots = yield* Bots
    const extra = yield* IntegrationServices
    const capabilities = yield* IntegrationCapabilities
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runPromise(runtime)
    const logLevel = yield* Effect.serviceOption(LogLevelControl)

    const states = new Map<string, IntegrationState>()
    const manifests = new Map<string, LoadedIntegration["manifest"]>()
    /** What each integration registered while it loaded: its type, dispatch types and workers. */
    const types = new Map<string, string>()
    const dispatchTypes = new Map<string, Array<string>>()
    const registeredWorkers = new Map<string, Array<Worker>>()
    const loading = new Set<string>()

    /** The hosts an integration's own non-secret `*_URL` settings name, as stored or configured. */
    const configuredHosts = (integrationId: string) =>
      Effect.map(settings.resolve(integrationId, manifests.get(integrationId)!), (resolved) =>
        resolved.flatMap((setting) => {
          // Only what an admin or the operator set: a manifest default is the author's, not theirs.
          if (!setting.key.endsWith("_URL") || setting.secret || setting.value === undefined) return []
          if (setting.source !== "stored" && setting.source !== "environment") return []
          try {
            return [new URL(setting.value).hostname.replace(/^\[(.*)\]$/, "$1")]
          } catch {
            return []
          }
        }))

    const services: ContextServices = {
      runtime,
      // Without the level control (an embedder's own logging), every line goes to Effect's loggers.
      logEnabled: (level) => Option.isNone(logLevel) || logLevel.value.enabled(level),
      registerHook: (event, callback) => hooks.registerHook(event, callback),
      registerDispatcher: (integrationId) => (type, dispatcher) => {
        extra.registerDispatcher(integrationId, type, dispatcher)
        dispatchTypes.set(integrationId, [...(dispatchTypes.get(integrationId) ?? []), type])
      },
      settings: (integrationId) => ({
        get: async (key) => {
          const resolved = await run(settings.resolve(integrationId, manifests.get(integrationId)!))
          const found = resolved.find((s) => s.key === key)
          return found ? found.value : await run(settings.environment(key))
        },
        all: async () => {
          const resolved = await run(settings.resolve(integrationId, manifests.get(integrationId)!))
          return Object.fromEntries(resolved.map((s) => [s.key, s.value]))
        }
      }),
      ingestDocument: (integrationId, title, content, sessionId, metadata) =>
        Effect.map(
          documents.ingest({ integration_id: integrationId, title, content, session_id: sessionId ?? null, metadata: metadata ?? {} }),
          (document) => document.id
        ),
      searchDocuments: (q, integrationId, limit) => documents.search({ q, integration_id: integrationId, limit }),
      getOrCreateSession: (clientId, botId, dispatchConfig) =>
        Effect.map(sessions.getOrCreate({ clientId, botId: botId ?? "default", dispatchConfig }), (session) => session.id),
      injectMessage: (sessionId, content, options) => extra.injectMessage(sessionId, content, options ?? {}),
      workspace: extra.workspace,
      getBot: (botId) =>
        bots.get(botId).pipe(
          Effect.map((bot) => ({ id: bot.id, name: bot.name })),
          Effect.catchTag("BotNotFound", () => Effect.succeed(null))
        ),
      capabilities,
      caller: (integrationId) => ({
        id: integrationId,
        integrationType: () => types.get(integrationId) ?? integrationId,
        dispatchTypes: () => dispatchTypes.get(integrationId) ?? [],
        configuredHosts: () => configuredHosts(integrationId),
        integrationStatuses: () =>
          Effect.forEach([...states.values()], (state) =>
            state.loaded
              ? Effect.map(settings.resolve(state.id, state.loaded.manifest), (resolved) => ({ id: state.id, status: statusOf(resolved) }))
              : Effect.succeed({ id: state.id, status: "failed" }))
      }),
      registerWorker: (integrationId) => (worker) => {
        if (!loading.has(integrationId)) throw new TypeError("registerWorker is only available while the integration loads (in hooks.ts)")
        registeredWorkers.set(integrationId, [...(registeredWorkers.get(integrationId) ?? []), checkWorker(worker, "registerWorker")])
      }
    }

    /** Imports one integration and runs its hooks and dispatchers; what it registered is taken back if one fails. */
    const importIntegration = (candidate: Candidate) => {
      const undo: Array<() => void> = []
      let metadata: IntegrationMetadata | null = null
      return Effect.tryPromise({
        try: async () => {
          const integration = await load(candidate)
          manifests.set(candidate.id, integration.manifest)
          // Hooks registered before a later part fails are taken back with the integration.
          const context = makeContext(
            candidate.id,
            {
              ...services,
              registerHook: (event, callback) => {
                const unregister = services.registerHook(event, callback)
                undo.push(unregister)
                return unregister
              }
            },
            (m) => {
              metadata = m
              types.set(candidate.id, m.integration_type)
            }
          )
          loading.add(candidate.id)
          try {
            if (integration.hooks) await integration.hooks(context)
            if (integration.dispatchers) await integration.dispatchers(context)
            checkWorkerNames([...integration.workers, ...(registeredWorkers.get(candidate.id) ?? [])])
          } catch (error) {
            for (const unregister of undo) unregister()
            types.delete(candidate.id)
            throw error
          } finally {
            loading.delete(candidate.id)
          }
          return { integration, context, metadata: metadata as IntegrationMetadata | null }
        },
        catch: (cause) => (cause instanceof Error ? cause.message : String(cause))
      })
    }

    /** Registers what a loaded integration brings (tools, skills, carapaces, templates) and records it. */
    const registerParts = (
      candidate: Candidate,
      { integration, context, metadata }: Effect.Effect.Success<ReturnType<typeof importIntegration>>
    ) =>
      Effect.gen(function*() {
        const workers = [...integration.workers, ...(registeredWorkers.get(integration.id) ?? [])]
        for (const tool of integration.tools) yield* tools.register(tool)
        const integrationSkills = integration.skillsDir
          ? readSkillDir(integration.skillsDir, `integrations/${integration.id}/`, integration.id)
          : []
        for (const skill of integrationSkills) yield* skills.register(skill)
        if (integration.carapacesDir) yield* extra.registerCarapaces(integration.id, integration.carapacesDir)
        if (integration.manifest.activation.carapaces.length > 0) {
          // Activation applies to channels bound under the integration's type (its id unless its
          // metadata names another).
          yield* extra.activateCarapaces(metadata?.integration_type ?? integration.id, integration.manifest.activation.carapaces)
        }
        if (integration.manifest.activation.templates.length > 0) {
          yield* extra.declareCompatibleTemplates(integration.id, integration.manifest.activation.templates)
        }
        // Its channels are recognised by their client ids from now on (a channel's `integration`).
        if (metadata) yield* clientPrefixes.register(metadata.client_id_prefix, integration.id, metadata)
        const parts = partsOf(integration, workers.length)
        states.set(integration.id, {
          id: integration.id,
          dir: integration.dir,
          overrides: candidate.overrides,
          loaded: integration,
          error: null,
          metadata,
          context,
          parts,
          workers
        })
        yield* Effect.logInfo(
          `Integration ${integration.id}${integration.version ? ` ${integration.version}` : ""} loaded: ${parts.join(", ") || "no parts"}`
        )
      })

    // The bundled example shows an author how the parts fit; an operator's install runs it only when asked.
    const exampleWanted = yield* Config.boolean("EXAMPLE_INTEGRATION").pipe(Config.withDefault(false))
    const candidates = discover(searchDirs({ integrationDirs: config.integrationDirs, dataDir: config.dataDir })).filter(
      (candidate) => exampleWanted || candidate.id !== "example" || candidate.root !== projectIntegrationsDir
    )
    for (const candidate of candidates) {
      const attempt = yield* Effect.either(importIntegration(candidate))
      if (attempt._tag === "Right") {
        yield* registerParts(candidate, attempt.right)
        continue
      }
      yield* Effect.logError(`Integration ${candidate.id} (${candidate.dir}) was not loaded: ${attempt.left}`)
      states.set(candidate.id, {
        id: candidate.id,
        dir: candidate.dir,
        overrides: candidate.overrides,
        loaded: null,
        error: attempt.left,
        metadata: null,
        context: null,
        parts: [],
        workers: []
      })
    }

    const sidebars = uniqueSidebars(
      [...states.values()].flatMap((state) =>
        state.loaded?.manifest.sidebar_section ? [{ integration: state.id, section: state.loaded.manifest.sidebar_section }] : []
      )
    )
    for (const reason of sidebars.rejected) yield* Effect.logError(`Sidebar section dropped: ${reason}`)

    const get = (id: string) => Option.fromNullable(states.get(id))
    const list = () => [...states.values()]
    const loaded = () =>
      list().filter((state): state is IntegrationState & { loaded: LoadedIntegration; context: IntegrationContext } =>
        state.loaded !== null
      )
    const sidebarSections = (): ReadonlyArray<NormalizedSidebar & { integration_id: string }> =>
      sidebars.kept.map((entry) => ({ ...entry.section, integration_id: entry.integration }))
    return traced("Integrations", { get, list, loaded, sidebarSections } as const)
  }),
  dependencies: [
    IntegrationCapabilities.Default,
    ClientPrefixes.Default,
    Bots.Default,
    Documents.Default,
    Hooks.Default,
    IntegrationServicesLive,
    IntegrationSettings.Default,
    Sessions.Default,
    SkillLibraryLive,
    ToolRegistryLive,
    BotFilesSync,
    CarapaceFilesSync
  ]
}) {}
