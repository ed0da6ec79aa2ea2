/**
 * The `cairn` command. Server side: `serve` runs the server (what `npm start` does), `migrate`
 * applies pending migrations and exits, `restore` restores a backup archive. Client side (src/cli/,
 * on the typed client alone): `chat`, `login`, `keys`, `bots`, `providers`, `docs`, `tasks`, `backup`, `status`.
 * The server's modules load only for a server command, so a client command starts quickly.
 *
 * Exit codes: 0 done, 1 failed (one line on stderr says why), 2 a usage error.
 */
import { Args, Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Layer } from "effect"
import { keysCommand, loginCommand } from "./cli/Access.ts"
import { chatCommand } from "./cli/Chat.ts"
import { docsCommand } from "./cli/Docs.ts"
import { backupCommand, statusCommand } from "./cli/Operations.ts"
import { describeFailure, ExitCode } from "./cli/Output.ts"
import { makeProgress } from "./cli/Progress.ts"
import { providersCommand } from "./cli/Providers.ts"
import { botsCommand, tasksCommand } from "./cli/Resources.ts"
import { cairnVersion } from "./contract/Version.ts"

const server = Effect.promise(async () => {
  const [AppConfig, DotEnv, Database, main, Restore, Restart] = await Promise.all([
    import("./config/AppConfig.ts"),
    import("./config/DotEnv.ts"),
    import("./db/Database.ts"),
    import("./main.ts"),
    import("./operations/Restore.ts"),
    import("./operations/Restart.ts")
  ])
  return { AppConfig, DotEnv, Database, main, Restore, Restart }
})

/** Set by a server command's restart request, read when the process exits. */
let restartExitCode: number | undefined

const withServerConfig = <A, E, R>(use: (modules: Effect.Effect.Success<typeof server>) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(server, (modules) =>
    use(modules).pipe(
      Effect.withConfigProvider(modules.DotEnv.configProvider()),
      Effect.ensuring(
        Effect.sync(() => (restartExitCode = modules.Restart.isRestartRequested() ? modules.Restart.restartExitCode : undefined))
      )
    ))

const serve = Command.make(
  "serve",
  {},
  () => withServerConfig(({ AppConfig, main }) => Layer.launch(main.AppLive.pipe(Layer.provide(AppConfig.layer))))
).pipe(Command.withDescription("Serve the HTTP API and the web app (migrations are applied first)"))

const migrate = Command.make(
  "migrate",
  {},
  () =>
    withServerConfig(({ AppConfig, main }) =>
      Effect.logInfo("Migrations applied; the database is up to date").pipe(
        Effect.provide(main.DatabaseLive.pipe(Layer.provide(main.ObservabilityLive), Layer.provide(AppConfig.layer)))
      )
    )
).pipe(Command.withDescription("Apply pending database migrations and exit"))

const restoreCommand = Command.make(
  "restore",
  { archive: Args.file({ name: "archive", exists: "yes" }) },
  ({ archive }) =>
    withServerConfig(({ AppConfig, Database, main, Restore }) => {
      let bar: ReturnType<typeof makeProgress> | undefined
      // The database as it is (no migrations first): a restore builds the schema the backup needs.
      return Restore.restore(archive, {
        started: (total) => (bar = makeProgress({ label: "restore", total, unit: "items", noun: "rows" })),
        loaded: (rows) => bar?.advance(rows)
      }).pipe(
        Effect.tap(() => bar?.finish()),
        Effect.asVoid,
        Effect.provide(Database.layer().pipe(Layer.provideMerge(main.ObservabilityLive), Layer.provideMerge(AppConfig.layer)))
      )
    })
).pipe(
  Command.withDescription(
    "Restore a backup archive (cairn backup, or POST /api/v1/admin/operations/backup) into an empty DATA_DIR and database; a backup of an older release is brought to this one"
  )
)

const cairn = Command.make("cairn").pipe(
  Command.withDescription("Cairn, a self-hosted agent server, and its command-line client"),
  Command.withSubcommands([
    serve,
    migrate,
    restoreCommand,
    chatCommand,
    loginCommand,
    keysCommand,
    botsCommand,
    providersCommand,
    docsCommand,
    tasksCommand,
    backupCommand,
    statusCommand
  ])
)

const run = Command.run(cairn, { name: "cairn", version: cairnVersion })

/** A usage error (@effect/cli has printed it) exits 2; any other failure prints one line and exits 1. */
const exitCodeOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (restartExitCode !== undefined) return restartExitCode
  // A stop by signal (Ctrl+C of `serve`, SIGTERM) is the normal end.
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return ExitCode.ok
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return ExitCode.usage
  return ExitCode.failure
}

run(process.argv).pipe(
  Effect.tapError((error) => (ValidationError.isValidationError(error) ? Effect.void : Console.error(`cairn: ${describeFailure(error)}`))),
  Effect.tapDefect((cause) => Console.error(Cause.pretty(cause))),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // Exits at once with the code: the scope has closed, and an idle keep-alive socket or the
    // terminal's input must not hold a finished client command open.
    teardown: (exit) => process.exit(exitCodeOf(exit))
  })
)
