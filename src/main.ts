/**
 * Composition root: every layer of the server, wired once. Nothing else lives here.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AccessHttpLive, AuthServicesLive } from "./access/Layers.ts"
import * as AuthMiddleware from "./access/Middleware.ts"
import { Widgets } from "./access/widget/Widgets.ts"
import { BuiltinToolsLive } from "./agent/builtins/Builtins.ts"
import { Interactions } from "./agent/Interactions.ts"
import { AgentLoop } from "./agent/Loop.ts"
import * as Tools from "./agent/Tools.ts"
import { CairnApi } from "./Api.ts"
import { Attachments } from "./attachments/Attachments.ts"
import { AttachmentsHttpLive } from "./attachments/Http.ts"
import { documented, EndpointCatalogue, fromApi } from "./auth/Catalogue.ts"
import { Bindings } from "./bindings/Bindings.ts"
import { BindingsHttpLive } from "./bindings/Http.ts"
import { Bots } from "./bots/Bots.ts"
import { BotsHttpLive } from "./bots/Http.ts"
import { Budgets } from "./budgets/Budgets.ts"
import { BudgetsHttpLive } from "./budgets/Http.ts"
import { Carapaces } from "./carapaces/Carapaces.ts"
import { CarapacesHttpLive } from "./carapaces/Http.ts"
import { Channels } from "./channels/Channels.ts"
import { ChannelsHttpLive } from "./channels/Http.ts"
import { ChannelMessagesHttpLive } from "./chat/ChannelMessagesHttp.ts"
import { ChatHttpLive } from "./chat/Http.ts"
import { SessionDocuments } from "./chat/SessionDocuments.ts"
import { SessionDocumentsHttpLive } from "./chat/SessionDocumentsHttp.ts"
import { Summaries } from "./chat/Summaries.ts"
import { AppConfig } from "./config/AppConfig.ts"
import * as Database from "./db/Database.ts"
import * as Migrations from "./db/Migrations.ts"
import { Documents } from "./documents/Documents.ts"
import { DocumentsHttpLive } from "./documents/Http.ts"
import { GitRepository } from "./gitrepo/GitRepository.ts"
import { RepositoryHttpLive } from "./gitrepo/Http.ts"
import { drainFirst } from "./health/Drain.ts"
import { HealthHttpLive, MetricsHttpLive } from "./health/Http.ts"
import { Memory } from "./health/Memory.ts"
import { MetricsExport, metricsPortLive } from "./health/Metrics.ts"
import { Readiness } from "./health/Readiness.ts"
import { Heartbeats } from "./heartbeats/Heartbeats.ts"
import { HeartbeatsHttpLive } from "./heartbeats/Http.ts"
import { HeartbeatSchedulerLive } from "./heartbeats/Scheduler.ts"
import { Hooks } from "./hooks/Hooks.ts"
import { serve } from "./http/Server.ts"
import { WidgetFraming } from "./http/WidgetFraming.ts"
import { DeadLettersHttpLive } from "./inbound/Http.ts"
import { Inbound } from "./inbound/Inbound.ts"
import { InboundSyncLive } from "./inbound/Sync.ts"
import { Intake } from "./intake/Intake.ts"
import { IntegrationsHttpLive } from "./integrations/Http.ts"
import { Integrations } from "./integrations/Integrations.ts"
import { ListeningAddress, ProcessesLive } from "./integrations/Processes.ts"
import { withIntegrationRoutes } from "./integrations/Routes.ts"
import { IntegrationSettings } from "./integrations/Settings.ts"
import { WorkersLive } from "./integrations/Workers.ts"
import * as QuietCollection from "./lifecycle/QuietCollection.ts"
import { ShutdownSignal } from "./lifecycle/Shutdown.ts"
import { LogsHttpLive } from "./logs/Http.ts"
import { Journal } from "./logs/Journal.ts"
import { McpHttpLive } from "./mcp/Http.ts"
import { McpServers } from "./mcp/McpServers.ts"
import { mcpErrorShape } from "./mcpserver/ErrorShape.ts"
import { McpServerHttpLive } from "./mcpserver/Http.ts"
import { McpServer } from "./mcpserver/McpServer.ts"
import { Completions } from "./openai/Completions.ts"
import { openAiErrorShape, OpenAiHttpLive } from "./openai/Http.ts"
import { Backups } from "./operations/Backups.ts"
import { OperationsHttpLive } from "./operations/Http.ts"
import { LlmHttpLive, ProvidersHttpLive } from "./providers/Http.ts"
import { Llm } from "./providers/Llm.ts"
import { Providers } from "./providers/Providers.ts"
import { RunsHttpLive } from "./runs/Http.ts"
import { Runs } from "./runs/Runs.ts"
import { Turns } from "./runs/Turns.ts"
import * as ServerSecret from "./secrets/ServerSecret.ts"
import { SessionsHttpLive } from "./sessions/Http.ts"
import { Sessions } from "./sessions/Sessions.ts"
import { SettingsHttpLive } from "./settings/Http.ts"
import { Settings } from "./settings/Settings.ts"
import { SkillsHttpLive } from "./skills/Http.ts"
import * as Skills from "./skills/Skills.ts"
import { SpeechHttpLive } from "./speech/Http.ts"
import { Speech } from "./speech/Speech.ts"
import { ApprovalNotices } from "./tasks/ApprovalNotice.ts"
import { DelegatedPosts } from "./tasks/delivery/Delegated.ts"
import { Dispatchers } from "./tasks/delivery/Dispatchers.ts"
import { InjectionHttpLive, TasksHttpLive } from "./tasks/Http.ts"
import { Injector } from "./tasks/Injection.ts"
import { Tasks } from "./tasks/Tasks.ts"
import { WorkerLive } from "./tasks/Worker.ts"
import * as Logging from "./telemetry/Logging.ts"
import { measureRequests } from "./telemetry/Metrics.ts"
import * as Tracing from "./telemetry/Tracing.ts"
import { TodosHttpLive } from "./todos/Http.ts"
import { Todos } from "./todos/Todos.ts"
import { UsageHttpLive } from "./usage/Http.ts"
import { Usage } from "./usage/Usage.ts"
import { WorkflowEngineLive } from "./workflows/Engine.ts"
import { WorkflowsHttpLive } from "./workflows/Http.ts"
import { Workflows } from "./workflows/Workflows.ts"
import { WorkspacesHttpLive } from "./workspaces/Http.ts"
import { Workspaces } from "./workspaces/Workspaces.ts"

/** The database, with every migration applied before anything else may use it. */
export const DatabaseLive = Layer.effectDiscard(Migrations.run()).pipe(Layer.provideMerge(Database.layer()))

/**
 * Every domain's services. Each `Default` (or layer) brings its own dependencies, and a layer used
 * in several places is built once, so this is a plain list by domain, in no order; what must
 * happen first says so where it is declared (the bot and carapace files sync before integrations
 * load, as `Integrations` depends on both syncs). Merged, not only provided: the handlers, the
 * tests and embedders reach the services through it.
 */
const ServicesLive = Layer.mergeAll(
  Settings.Default,
  Hooks.Default,
  Usage.Default,
  Budgets.Default,
  Journal.Default,
  Attachments.Default,
  Backups.Default,
  GitRepository.Default,
  Heartbeats.Default,
  Workflows.Default,
  AuthServicesLive,
  Bots.Default,
  Channels.Default,
  Sessions.Default,
  Bindings.Default,
  Workspaces.Default,
  Carapaces.Default,
  Providers.Default,
  Llm.Default,
  Speech.Default,
  Todos.Default,
  Documents.Default,
  SessionDocuments.Default,
  Tools.layer,
  BuiltinToolsLive,
  Skills.layer,
  Interactions.Default,
  AgentLoop.Default,
  Runs.Default,
  Turns.Default,
  Intake.Default,
  Summaries.Default,
  Tasks.Default,
  Injector.Default,
  Dispatchers.Default,
  DelegatedPosts.Default,
  ApprovalNotices.Default,
  Inbound.Default,
  IntegrationSettings.Default,
  Integrations.Default,
  Completions.Default,
  McpServer.Default,
  McpServers.Default,
  Memory.Default,
  Readiness.Default,
  MetricsExport.Default
)

/**
 * Work beside the handlers, started once the services are up: the task worker, integration
 * processes and workers, the heartbeat scheduler, the workflow engine, the collection when quiet.
 */
const BackgroundLive = Layer.mergeAll(
  WorkerLive,
  InboundSyncLive,
  ProcessesLive,
  WorkersLive,
  HeartbeatSchedulerLive,
  WorkflowEngineLive,
  QuietCollection.layer,
  metricsPortLive
)

const HandlersLive = Layer.mergeAll(
  HealthHttpLive,
  MetricsHttpLive,
  SettingsHttpLive,
  BotsHttpLive,
  ChannelsHttpLive,
  SessionsHttpLive,
  ChatHttpLive,
  RunsHttpLive,
  SpeechHttpLive,
  ChannelMessagesHttpLive,
  TodosHttpLive,
  LogsHttpLive,
  AttachmentsHttpLive,
  OperationsHttpLive,
  RepositoryHttpLive,
  HeartbeatsHttpLive,
  WorkflowsHttpLive,
  AccessHttpLive,
  ProvidersHttpLive,
  LlmHttpLive,
  UsageHttpLive,
  BudgetsHttpLive,
  DocumentsHttpLive,
  SessionDocumentsHttpLive,
  InjectionHttpLive,
  TasksHttpLive,
  DeadLettersHttpLive,
  BindingsHttpLive,
  WorkspacesHttpLive,
  CarapacesHttpLive,
  SkillsHttpLive,
  IntegrationsHttpLive,
  OpenAiHttpLive,
  McpServerHttpLive,
  McpHttpLive
)

/**
 * The API: the core definition plus each loaded integration's routes (known only after loading),
 * with the endpoint catalogue reflected from the result.
 */
const ApiLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const integrations = yield* Integrations
    const mounted = withIntegrationRoutes(
      CairnApi,
      integrations.loaded().map((state) => ({ id: state.id, routes: state.loaded.routes, context: state.context }))
    )
    const catalogue = fromApi(mounted.api)
    const api = HttpApiBuilder.api(documented(mounted.api, catalogue)).pipe(
      Layer.provide(Layer.mergeAll(HandlersLive, ...mounted.handlers)),
      Layer.provide(AuthMiddleware.layer)
    )
    return api.pipe(Layer.provide(Layer.succeed(EndpointCatalogue, catalogue)))
  })
)

/** Logging and tracing as configured. */
export const ObservabilityLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => Layer.merge(Logging.layer(config.logLevel), Tracing.layer(config.otlpEndpoint)))
)

/** The whole server: needs only `AppConfig`; answers the listening `HttpServer` and the services. */
export const AppLive = drainFirst.pipe(
  // Built last, so released first: a stop turns readiness false before anything closes.
  Layer.provideMerge(ListeningAddress.publish),
  Layer.provideMerge(serve(ApiLive, (app) => measureRequests(openAiErrorShape(mcpErrorShape(app))))),
  // The widget page's framing origins, from the widget service (the console edits them at runtime).
  Layer.provideMerge(Layer.effect(WidgetFraming, Effect.map(Widgets, (widgets) => ({ origins: widgets.embedOrigins })))),
  Layer.provideMerge(BackgroundLive),
  Layer.provideMerge(ServicesLive),
  // What every domain shares and none owns: the server secret, the shutdown signal, the bound address.
  Layer.provide(Layer.mergeAll(ServerSecret.layer, ShutdownSignal.layer, ListeningAddress.layer)),
  // Merged: embedders and tests reach the server's own connection (PGlite allows one per data dir).
  Layer.provideMerge(DatabaseLive),
  Layer.provide(ObservabilityLive)
)
