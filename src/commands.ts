/**
 * The `cairn` command tree. Server side: `serve` runs the server (what `npm start` does), `migrate`
 * applies pending migrations and exits, `restore` restores a backup archive. Client side (src/cli/,
 * on the typed client alone): `chat`, `login`, `keys`, `bots`, `providers`, `budgets`, `docs`, `tasks`,
 * `approvals`, `dead-letters`, `backup`, `status`, `logs`. The server's modules load only when a server command runs, so a client command starts
 * quickly; src/cli.ts runs the tree, and the build saves its help (cli/HelpTree.ts) for bin/cairn.mjs.
 * It lives beside src/cli.ts, not in src/cli/: the server commands reach the server's modules.
 */
import { Args, Command } from "@effect/cli"
import { Effect, Layer } from "effect"
import { keysCommand, loginCommand } from "./cli/Access.ts"
import { approvalsCommand } from "./cli/Approvals.ts"
import { budgetsCommand } from "./cli/Budgets.ts"
import { chatCommand } from "./cli/Chat.ts"
import { deadLettersCommand } from "./cli/DeadLetters.ts"
import { docsCommand } from "./cli/Docs.ts"
import { logsCommand } from "./cli/Logs.ts"
import { backupCommand, statusCommand } from "./cli/Operations.ts"
import { makeProgress } from "./cli/Progress.ts"
import { providersCommand } from "./cli/Providers.ts"
import { botsCommand, tasksCommand } from "./cli/Resources.ts"

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
export const requestedExitCode = () => restartExitCode

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

export const cairn = Command.make("cairn").pipe(
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
    budgetsCommand,
    docsCommand,
    tasksCommand,
    approvalsCommand,
    deadLettersCommand,
    backupCommand,
    statusCommand,
    logsCommand
  ])
)

/** Examples shown by `--help`, by the command's path without `cairn` (`""` is `cairn` itself). */
export const examples: Readonly<Record<string, ReadonlyArray<string>>> = {
  "": ["cairn serve", "cairn login --url http://localhost:8000 --username admin", "cairn chat --bot default", "cairn status"],
  login: ["cairn login --username admin", "cairn login --url https://cairn.example.org --key \"$CAIRN_API_KEY\""],
  chat: ["cairn chat", "cairn chat --bot writer"],
  "keys create": ["cairn keys create --preset chat_client --name laptop"],
  "bots apply": ["cairn bots apply bots/writer.yaml"],
  "docs ingest": ["cairn docs ingest notes/ README.md"],
  "docs search": ["cairn docs search harbour pilot --limit 5"],
  "tasks list": ["cairn tasks list --status pending"],
  "tasks show": ["cairn tasks show 3f2a"],
  "approvals list": ["cairn approvals list", "cairn approvals list --status denied"],
  "approvals approve": ["cairn approvals approve 3f2a9c1e"],
  backup: ["cairn backup -o cairn.tar.gz"],
  restore: ["cairn restore cairn.tar.gz"],
  status: ["cairn status", "cairn status --json"],
  logs: ["cairn logs", "cairn logs --level warning --since 10m", "cairn logs -q mailbox --json"],
  budgets: ["cairn budgets", "cairn budgets --json"],
  "dead-letters list": ["cairn dead-letters list", "cairn dead-letters list --source msgbridge"],
  "dead-letters retry": ["cairn dead-letters retry 3f2a9c1e"]
}
