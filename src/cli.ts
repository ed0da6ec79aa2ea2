/**
 * The `cairn` command: `serve` runs the server (what `npm start` does), `migrate` applies pending
 * migrations and exits. SIGINT and SIGTERM close the application scope gracefully.
 */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as AppConfig from "./config/AppConfig.ts"
import { configProvider } from "./config/DotEnv.ts"
import { AppLive, DatabaseLive, ObservabilityLive } from "./main.ts"

const serve = Command.make("serve", {}, () => Layer.launch(AppLive.pipe(Layer.provide(AppConfig.layer)))).pipe(
  Command.withDescription("Serve the HTTP API (migrations are applied first)")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.logInfo("Migrations applied; the database is up to date").pipe(
    Effect.provide(DatabaseLive.pipe(Layer.provide(ObservabilityLive), Layer.provide(AppConfig.layer)))
  )
).pipe(Command.withDescription("Apply pending database migrations and exit"))

const cairn = Command.make("cairn").pipe(
  Command.withDescription("Cairn, a self-hosted agent server"),
  Command.withSubcommands([serve, migrate])
)

const run = Command.run(cairn, { name: "cairn", version: "0.1.0" })

run(process.argv).pipe(
  Effect.withConfigProvider(configProvider()),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
