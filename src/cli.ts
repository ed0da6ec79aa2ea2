/**
 * The `cairn` command: `serve` runs the server (what `npm start` does), `migrate` applies pending
 * migrations and exits, `restore` restores a backup archive. SIGINT and SIGTERM close the application scope gracefully.
 */
import { Args, Command } from "@effect/cli"
import { Runtime } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as AppConfig from "./config/AppConfig.ts"
import { configProvider } from "./config/DotEnv.ts"
import * as Database from "./db/Database.ts"
import { AppLive, DatabaseLive, ObservabilityLive } from "./main.ts"
import { restore } from "./operations/Restore.ts"
import { isRestartRequested, restartExitCode } from "./operations/Restart.ts"

const serve = Command.make("serve", {}, () => Layer.launch(AppLive.pipe(Layer.provide(AppConfig.layer)))).pipe(
  Command.withDescription("Serve the HTTP API (migrations are applied first)")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.logInfo("Migrations applied; the database is up to date").pipe(
    Effect.provide(DatabaseLive.pipe(Layer.provide(ObservabilityLive), Layer.provide(AppConfig.layer)))
  )
).pipe(Command.withDescription("Apply pending database migrations and exit"))

const restoreCommand = Command.make("restore", { archive: Args.file({ name: "archive", exists: "yes" }) }, ({ archive }) =>
  // The database as it is (no migrations first): a restore builds the schema the backup needs.
  restore(archive).pipe(Effect.asVoid, Effect.provide(Database.layer().pipe(Layer.provideMerge(ObservabilityLive), Layer.provideMerge(AppConfig.layer))))
).pipe(
  Command.withDescription(
    "Restore a backup archive (POST /api/v1/admin/operations/backup) into an empty DATA_DIR and database; a backup of an older release is brought to this one"
  )
)

const cairn = Command.make("cairn").pipe(
  Command.withDescription("Cairn, a self-hosted agent server"),
  Command.withSubcommands([serve, migrate, restoreCommand])
)

const run = Command.run(cairn, { name: "cairn", version: "0.1.0" })

run(process.argv).pipe(
  Effect.withConfigProvider(configProvider()),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({
    disableErrorReporting: false,
    // A requested restart exits with its own code, for the supervisor to start the server again.
    teardown: (exit, onExit) => (isRestartRequested() ? onExit(restartExitCode) : Runtime.defaultTeardown(exit, onExit))
  })
)
