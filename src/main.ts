/**
 * Composition root: every layer of the server, wired once. Nothing else lives here.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { CairnApi } from "./Api.ts"
import { AccessHttpLive, AuthServicesLive } from "./access/Layers.ts"
import * as AuthMiddleware from "./access/Middleware.ts"
import { BotFilesSync, Bots } from "./bots/Bots.ts"
import { BotsHttpLive } from "./bots/Http.ts"
import { Bindings } from "./bindings/Bindings.ts"
import { BindingsHttpLive } from "./bindings/Http.ts"
import { CarapaceFilesSync, Carapaces } from "./carapaces/Carapaces.ts"
import { CarapacesHttpLive } from "./carapaces/Http.ts"
import { Channels } from "./channels/Channels.ts"
import { ChannelsHttpLive } from "./channels/Http.ts"
import { AppConfig } from "./config/AppConfig.ts"
import * as ServerSecret from "./secrets/ServerSecret.ts"
import * as Database from "./db/Database.ts"
import * as Migrations from "./db/Migrations.ts"
import { Documents } from "./documents/Documents.ts"
import { DocumentsHttpLive } from "./documents/Http.ts"
import * as Embedder from "./embeddings/Live.ts"
import { HealthHttpLive } from "./health/Http.ts"
import { Hooks } from "./hooks/Hooks.ts"
import { documented, EndpointCatalogue, fromApi } from "./auth/Catalogue.ts"
import { serve } from "./http/Server.ts"
import { ShutdownSignal } from "./http/Shutdown.ts"
import { IntegrationsHttpLive } from "./integrations/Http.ts"
import { Integrations } from "./integrations/Integrations.ts"
import { ListeningAddress, ProcessesLive } from "./integrations/Processes.ts"
import { withIntegrationRoutes } from "./integrations/Routes.ts"
import * as IntegrationServices from "./integrations/Services.ts"
import { IntegrationSettings } from "./integrations/Settings.ts"
import { LlmHttpLive, ProvidersHttpLive } from "./providers/Http.ts"
import { LlmLive } from "./providers/Llm.ts"
import { Delegation } from "./agent/Delegation.ts"
import { Interactions } from "./agent/Interactions.ts"
import { AgentLoop } from "./agent/Loop.ts"
import * as Tools from "./agent/Tools.ts"
import { Chat } from "./chat/Chat.ts"
import { ChatHttpLive } from "./chat/Http.ts"
import { RunsHttpLive } from "./runs/Http.ts"
import { Runs } from "./runs/Runs.ts"
import { Turns } from "./runs/Turns.ts"
import * as Skills from "./skills/Skills.ts"
import { Tasks } from "./tasks/Tasks.ts"
import { WorkerLive } from "./tasks/Worker.ts"
import { InjectionHttpLive, TasksHttpLive } from "./tasks/Http.ts"
import { Injector } from "./tasks/Injection.ts"
import { Dispatchers } from "./tasks/delivery/Dispatchers.ts"
import { SessionsHttpLive } from "./sessions/Http.ts"
import { Sessions } from "./sessions/Sessions.ts"
import { SettingsHttpLive } from "./settings/Http.ts"
import { Settings } from "./settings/Settings.ts"
import * as Logging from "./telemetry/Logging.ts"
import * as Tracing from "./telemetry/Tracing.ts"
import { UsageHttpLive } from "./usage/Http.ts"
import { WorkspacesHttpLive } from "./workspaces/Http.ts"
import { Workspaces } from "./workspaces/Workspaces.ts"

/** The database, with every migration applied before anything else may use it. */
export const DatabaseLive = Layer.effectDiscard(Migrations.run()).pipe(Layer.provideMerge(Database.layer()))

/** Services that need only the configuration and the database. */
const FoundationLive = Layer.mergeAll(
  Settings.Default,
  ServerSecret.layer,
  Bots.Default,
  BotFilesSync,
  Hooks.Default,
  ShutdownSignal.layer
)

/** Services built on the foundation (each may use any foundation service). */
const DomainLive = Layer.mergeAll(AuthServicesLive, Sessions.Default, LlmLive, Channels.Default)

/** Channel bindings, workspaces and carapaces (they use channels and bots). */
const ChannelExtrasLive = Layer.mergeAll(
  Workspaces.Default,
  CarapaceFilesSync.pipe(Layer.provideMerge(Carapaces.Default))
).pipe(Layer.provideMerge(Bindings.Default))

/** Services that use domain services (documents embed through the LLM registry). */
const UpperLive = Layer.merge(Documents.Default.pipe(Layer.provide(Embedder.layer)), ChannelExtrasLive)

/** The agent: runs, the loop and what it waits on, tools and skills. */
const AgentLive = Layer.mergeAll(Turns.Default, Dispatchers.Default).pipe(
  Layer.provideMerge(Injector.Default),
  Layer.provideMerge(Tasks.Default),
  Layer.provideMerge(AgentLoop.Default),
  Layer.provideMerge(
    Layer.mergeAll(Runs.Default, Interactions.Default, Tools.layer, Skills.layer, Delegation.Default)
  )
)

/** Conversations: chat requests and the task worker, on top of the agent. */
const ConversationLive = Layer.mergeAll(Chat.Default, WorkerLive).pipe(Layer.provideMerge(AgentLive))

/** Integrations: loaded at startup on top of everything they may use, and their processes. */
const IntegrationLive = ProcessesLive.pipe(
  Layer.provideMerge(Integrations.Default),
  Layer.provideMerge(Layer.mergeAll(IntegrationSettings.Default, IntegrationServices.layer, ListeningAddress.layer))
)

/** Everything the HTTP handlers and middleware use; add new services to the right tier above. */
const ServicesLive = IntegrationLive.pipe(
  Layer.provideMerge(ConversationLive),
  Layer.provideMerge(UpperLive),
  Layer.provideMerge(DomainLive),
  Layer.provideMerge(FoundationLive)
)

const HandlersLive = Layer.mergeAll(
  HealthHttpLive,
  SettingsHttpLive,
  BotsHttpLive,
  ChannelsHttpLive,
  SessionsHttpLive,
  ChatHttpLive,
  RunsHttpLive,
  AccessHttpLive,
  ProvidersHttpLive,
  LlmHttpLive,
  UsageHttpLive,
  DocumentsHttpLive,
  InjectionHttpLive,
  TasksHttpLive,
  BindingsHttpLive,
  WorkspacesHttpLive,
  CarapacesHttpLive,
  IntegrationsHttpLive
)

/**
 * The API: the core definition plus each loaded integration's routes (known only after loading),
 * with the endpoint catalogue reflected from the result.
 */
const ApiLive = Layer.unwrapEffect(
  Effect.gen(function* () {
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
export const AppLive = ListeningAddress.publish.pipe(
  Layer.provideMerge(serve(ApiLive)),
  // Merged, not only provided: embedders and tests reach the services (a tool, a hook) through it.
  Layer.provideMerge(ServicesLive),
  Layer.provide(DatabaseLive),
  Layer.provide(ObservabilityLive)
)
