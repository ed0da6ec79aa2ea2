/**
 * Schema migrations: numbered `.sql` files in `migrations/` (`0001_core.sql`), applied in order at
 * startup inside one transaction that locks the migrations table, so concurrent server processes
 * never apply one twice and a database made by an older release is brought forward.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Duration, Effect, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { projectDir } from "../config/ProjectRoot.ts"
import { tracedFn } from "../telemetry/Spans.ts"

export const migrationsDir = projectDir("migrations")

const fileName = /^(\d+)_([\w-]+)\.sql$/

/** The migrations in a directory, optionally only those up to `upTo` (tests replay old releases). */
export const fromDirectory = (dir: string, upTo = Number.POSITIVE_INFINITY): Migrator.Loader =>
  Effect.try({
    try: () =>
      fs
        .readdirSync(dir)
        .flatMap((file): Array<Migrator.ResolvedMigration> => {
          const match = fileName.exec(file)
          if (!match) return []
          const id = Number(match[1])
          if (id > upTo) return []
          const script = fs.readFileSync(path.join(dir, file), "utf8")
          const run = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(script))
          return [[id, match[2]!, Effect.succeed(run)]]
        })
        .sort((a, b) => a[0] - b[0]),
    catch: (cause) => new Migrator.MigrationError({ reason: "import-error", message: `Cannot read migrations in ${dir}`, cause })
  })

const migrator = Migrator.make({})

/**
 * Processes starting together on one fresh PostgreSQL race creating the migrations table
 * (`CREATE TABLE IF NOT EXISTS` is not safe under concurrency: "type cairn_migrations already
 * exists"). The loser's run failed as a whole (it is one transaction), so it tries again, and then
 * finds the table and the lock the winner took.
 */
const startupRace = Schedule.recurs(3).pipe(Schedule.addDelay(() => Duration.millis(200)))

/** Applies every pending migration; answers the ones applied now. */
export const run = tracedFn(
  "Migrations.run",
  (options: { readonly dir?: string; readonly upTo?: number } = {}) =>
    migrator({ loader: fromDirectory(options.dir ?? migrationsDir, options.upTo), table: "cairn_migrations" }).pipe(
      Effect.retry({ schedule: startupRace, while: (error) => error._tag === "SqlError" }),
      Effect.tap((applied) =>
        applied.length === 0
          ? Effect.logDebug("Database schema is up to date")
          : Effect.logInfo(`Applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
      )
    )
)
