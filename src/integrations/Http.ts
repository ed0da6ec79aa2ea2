import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { ToolRegistry } from "../agent/Tools.ts"
import { CairnApi } from "../Api.ts"
import {
  ConnectionTestResult,
  IntegrationHealth,
  IntegrationSettingsView,
  IntegrationSummary,
  SettingView,
  ToolResult,
  ToolView,
  WorkerStatusView
} from "./Api.ts"
import { failureMessage } from "./Context.ts"
import { IntegrationNotFound, NoConnectionCheck, ToolNotFound } from "./Errors.ts"
import { integrationHealth } from "./Health.ts"
import { Integrations, type IntegrationState } from "./Integrations.ts"
import { ProcessManager } from "./Processes.ts"
import { IntegrationSettings, type ResolvedSetting, shown, statusOf } from "./Settings.ts"
import { WorkerManager } from "./Workers.ts"

export const IntegrationsHttpLive = HttpApiBuilder.group(CairnApi, "integrations", (handlers) =>
  Effect.gen(function*() {
    const integrations = yield* Integrations
    const settings = yield* IntegrationSettings
    const processes = yield* ProcessManager
    const workers = yield* WorkerManager
    const workerViews = (id: string) => workers.statuses(id).map((status) => new WorkerStatusView(status))
    const tools = yield* ToolRegistry

    const loadedOr404 = (id: string) =>
      Option.match(integrations.get(id), {
        onNone: () => Effect.fail(new IntegrationNotFound({ detail: `Integration not found: ${id}` })),
        onSome: (state) =>
          state.loaded
            ? Effect.succeed(state.loaded)
            : Effect.fail(new IntegrationNotFound({ detail: `Integration ${id} failed to load: ${state.error}` }))
      })

    const view = (id: string, resolved: ReadonlyArray<ResolvedSetting>) =>
      new IntegrationSettingsView({
        integration_id: id,
        status: statusOf(resolved),
        settings: resolved.map((s) => new SettingView(shown(s))),
        can_test: Option.exists(integrations.get(id), (state) => state.loaded?.manifest.check != null)
      })

    /** Test connection: the integration's check on the settings as given; its throw is the answer's message. */
    const testSettings = (id: string, payload: Readonly<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const integration = yield* loadedOr404(id)
        const state = Option.getOrThrow(integrations.get(id))
        const check = integration.manifest.check
        if (!check || !state.context) return yield* new NoConnectionCheck({ detail: `${id} declares no connection check` })
        const values = yield* settings.tryValues(id, integration.manifest, payload)
        const started = Date.now()
        const outcome = yield* Effect.either(
          Effect.tryPromise({ try: () => check(state.context!, values), catch: (cause) => failureMessage(cause) }).pipe(
            Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => "No answer within 30 s" })
          )
        )
        return new ConnectionTestResult({
          ok: outcome._tag === "Right",
          message: outcome._tag === "Right" ? outcome.right : outcome.left,
          duration_ms: Date.now() - started
        })
      })

    const summary = (state: IntegrationState) =>
      Effect.gen(function*() {
        const resolved = state.loaded ? yield* settings.resolve(state.id, state.loaded.manifest) : []
        const missing = resolved.filter((s) => s.required && s.value === undefined).map((s) => s.key)
        const health = integrationHealth({
          loadError: state.loaded ? null : (state.error ?? "it did not load"),
          missingSettings: missing,
          workers: workers.statuses(state.id)
        })
        return new IntegrationSummary({
          id: state.id,
          name: state.loaded?.name ?? state.id,
          version: state.loaded?.version ?? null,
          status: state.loaded ? statusOf(resolved) : "failed",
          health: new IntegrationHealth(health),
          missing_settings: missing,
          parts: state.parts,
          error: state.error,
          dir: state.dir,
          overrides: state.overrides,
          metadata: state.metadata
            ? { integration_type: state.metadata.integration_type, client_id_prefix: state.metadata.client_id_prefix }
            : null,
          workers: workerViews(state.id),
          webhook: state.loaded?.manifest.webhook ?? null,
          dashboard_modules: state.loaded?.manifest.dashboard_modules ?? [],
          hud: state.loaded?.manifest.hud ?? null
        })
      })

    return handlers
      .handle("list", () =>
        Effect.forEach(integrations.list(), summary).pipe(
          Effect.map((list) => ({ integrations: list }))
        ))
      .handle("sidebar", () => Effect.succeed({ sections: integrations.sidebarSections() }))
      .handle("getSettings", ({ path }) =>
        Effect.gen(function*() {
          const integration = yield* loadedOr404(path.id)
          return view(path.id, yield* settings.resolve(path.id, integration.manifest))
        }))
      .handle("putSettings", ({ path, payload }) =>
        Effect.gen(function*() {
          const integration = yield* loadedOr404(path.id)
          return view(path.id, yield* settings.update(path.id, integration.manifest, payload))
        }))
      .handle("testSettings", ({ path, payload }) => testSettings(path.id, payload))
      .handle("process", ({ path }) =>
        Option.match(processes.status(path.id), {
          onNone: () => Effect.fail(new IntegrationNotFound({ detail: `Integration not found: ${path.id}` })),
          onSome: (status) => Effect.succeed({ integration_id: path.id, ...status })
        }))
      .handle("workers", ({ path }) => Effect.map(loadedOr404(path.id), () => ({ integration_id: path.id, workers: workerViews(path.id) })))
      .handle("tools", () =>
        Effect.succeed(
          tools.list().map(
            (tool) =>
              new ToolView({
                tool_name: tool.name,
                name: tool.name,
                description: tool.schema.function.description ?? "",
                parameters: tool.schema.function.parameters,
                source_integration: tool.source.startsWith("integration:") ? tool.source.slice("integration:".length) : null,
                source: tool.source,
                effect: tool.effect
              })
          )
        ))
      .handle("execute", ({ path, payload }) =>
        Effect.gen(function*() {
          if (!tools.get(path.name)) return yield* new ToolNotFound({ detail: `Tool not found: ${path.name}` })
          const started = Date.now()
          const outcome = yield* Effect.either(
            tools.execute(path.name, payload.arguments, {
              botId: payload.bot_id,
              sessionId: payload.session_id ?? "",
              channelId: payload.channel_id ?? null,
              clientId: "admin",
              correlationId: crypto.randomUUID()
            })
          )
          return new ToolResult({
            name: path.name,
            result: outcome._tag === "Right" ? outcome.right : `Error: ${outcome.left.message}`,
            is_error: outcome._tag === "Left",
            error: outcome._tag === "Left" ? outcome.left.message : null,
            duration_ms: Date.now() - started
          })
        }))
  }))
