/**
 * Composition root: every layer of the server, wired once. Nothing else lives here.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { CairnApi } from "./Api.ts"
import * as Authenticator from "./auth/Authenticator.ts"
import * as AuthMiddleware from "./auth/Middleware.ts"
import { AppConfig } from "./config/AppConfig.ts"
import * as ServerSecret from "./config/ServerSecret.ts"
import * as Database from "./db/Database.ts"
import * as Migrations from "./db/Migrations.ts"
import { HealthHttpLive } from "./health/Http.ts"
import { fromApi } from "./http/Catalogue.ts"
import { catalogueLayer, documented, serve } from "./http/Server.ts"
import { SettingsHttpLive } from "./settings/Http.ts"
import { Settings } from "./settings/Settings.ts"
import * as Logging from "./telemetry/Logging.ts"
import * as Tracing from "./telemetry/Tracing.ts"

/** The database, with every migration applied before anything else may use it. */
export const DatabaseLive = Layer.effectDiscard(Migrations.run()).pipe(Layer.provideMerge(Database.layer()))

const ServicesLive = Layer.mergeAll(Settings.Default, Authenticator.layer, ServerSecret.layer)

const HandlersLive = Layer.mergeAll(HealthHttpLive, SettingsHttpLive)

const ApiLive = HttpApiBuilder.api(documented(CairnApi, fromApi(CairnApi))).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(AuthMiddleware.layer),
  Layer.provide(catalogueLayer(CairnApi))
)

/** Logging and tracing as configured. */
export const ObservabilityLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => Layer.merge(Logging.layer(config.logLevel), Tracing.layer(config.otlpEndpoint)))
)

/** The whole server: needs only `AppConfig`; answers the listening `HttpServer`. */
export const AppLive = serve(ApiLive).pipe(
  Layer.provide(ServicesLive),
  Layer.provide(DatabaseLive),
  Layer.provide(ObservabilityLive)
)
