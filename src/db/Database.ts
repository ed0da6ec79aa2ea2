/**
 * The one `SqlClient` of the process. DATABASE_URL chooses PostgreSQL; without it the embedded
 * PGlite database lives in DATA_DIR. Services only ever see the generic `SqlClient`, and the few
 * repositories on a turn's path `DirectStatements` beside it (db/Direct.ts).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Data, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import Pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"
import { watchPool } from "../telemetry/Metrics.ts"
import * as Direct from "./Direct.ts"
import * as PgliteClient from "./PgliteClient.ts"

export class DatabaseUnavailable extends Data.TaggedError("DatabaseUnavailable")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** Which backend is in use, for logs, health and the few places that must know (pgvector). */
export class DatabaseInfo extends Effect.Tag("cairn/DatabaseInfo")<
  DatabaseInfo,
  { readonly backend: "pglite" | "postgres"; readonly location: string }
>() {}

/** Host and database of a URL without its credentials, safe for logs and errors. */
export const describeUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}${parsed.port ? ":" + parsed.port : ""}${parsed.pathname}`
  } catch {
    return "(unparseable URL)"
  }
}

/** The driver's own words (refused, timed out, auth failed), which never include the password. */
const reason = (error: { message: string; cause?: unknown }): string =>
  error.cause instanceof Error && error.cause.message ? error.cause.message : error.message

/** Reconnect attempts before startup gives up: exponential with jitter, capped at 5 s apart. */
const connectSchedule = (seconds: number) =>
  Schedule.exponential(Duration.millis(250), 2).pipe(
    Schedule.either(Schedule.spaced(Duration.seconds(5))),
    Schedule.jittered,
    Schedule.upTo(Duration.seconds(seconds))
  )

/**
 * The pool, made here rather than by `PgClient.layer` so that the statements a turn makes can run on
 * it directly (db/Direct.ts); its options are what `PgClient.layer` would give it. The first
 * connection is tried at once, as there, so an unreachable server fails the layer (and is retried).
 */
const openPool = (url: Redacted.Redacted<string>) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const pool = new Pg.Pool({ connectionString: Redacted.value(url), application_name: "cairn", connectionTimeoutMillis: 5000, max: 20 })
      // A pooled connection's error (the server restarted) is met by the next statement that uses it.
      pool.on("error", () => {})
      return Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(5),
          onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        }),
        Effect.tapError(() => Effect.promise(() => pool.end()).pipe(Effect.ignore)),
        Effect.as(pool)
      )
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  ).pipe(
    // Its connections in use, idle and waited for, at each metrics scrape (telemetry/Metrics.ts).
    Effect.tap((pool) => Effect.acquireRelease(Effect.sync(() => watchPool(pool)), (release) => Effect.sync(release)))
  )

/** How many distinct statements get a name; any other runs unnamed (parsed and planned each time). */
const namedMax = 64

/**
 * A statement on the pool: a free connection, the statement, the connection back (db/Direct.ts).
 * With `prepared`, each distinct statement text gets a name, so every connection parses and plans
 * it once and then only binds and runs it (node-postgres prepares a named statement on a connection
 * the first time it runs there). Parsing and planning were half of what a turn's statements cost
 * PostgreSQL (bench/README.md, "Prepared statements"). The names are few and fixed: the turn's
 * statements have one text each whatever their values.
 */
const poolExecute = (pool: Pg.Pool, prepared: boolean): Direct.DriverExecute => {
  const names = new Map<string, string>()
  let made = 0
  const nameOf = (sql: string) => {
    if (!prepared) return undefined
    let name = names.get(sql)
    if (name === undefined && names.size < namedMax) names.set(sql, name = `cairn_${++made}`)
    return name
  }
  const run = (sql: string, params: ReadonlyArray<unknown>, name: string | undefined, retried: boolean) =>
    Effect.async<ReadonlyArray<unknown>, SqlError>((resume) => {
      const values = params as Array<unknown>
      pool.query(
        name === undefined ? { text: sql, values } : { name, text: sql, values },
        (error: Error | undefined, result: Pg.QueryResult | undefined) => {
          if (error && name !== undefined && !retried && Direct.isStalePlan(error)) {
            // A migration changed what the statement returns: a new name prepares it afresh everywhere.
            names.delete(sql)
            resume(run(sql, params, nameOf(sql), true))
          } else if (error) resume(Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" })))
          else resume(Effect.succeed(result?.rows ?? []))
        }
      )
    })
  return (sql, params) => run(sql, params, nameOf(sql), false)
}

const postgresLayer = (url: Redacted.Redacted<string>, retry: Schedule.Schedule<unknown, unknown>, prepared: boolean) => {
  const where = describeUrl(Redacted.value(url))
  return Layer.scopedContext(
    Effect.gen(function*() {
      const pool = yield* openPool(url)
      const client = yield* PgClient.fromPool({ acquire: Effect.succeed(pool), applicationName: "cairn" })
      return Context.make(SqlClient.SqlClient, client).pipe(
        Context.add(PgClient.PgClient, client),
        Context.add(Direct.DirectStatements, Direct.make(poolExecute(pool, prepared)))
      )
    })
  ).pipe(
    Layer.provide(Reactivity.layer),
    Layer.tapError((error) => Effect.logWarning(`PostgreSQL at ${where} is not reachable yet (${reason(error)}); retrying`)),
    Layer.retry(retry),
    Layer.catchAll((error) =>
      Layer.fail(
        new DatabaseUnavailable({
          message: `Cannot connect to PostgreSQL at ${where}: ${reason(error)}`,
          cause: error
        })
      )
    )
  )
}

export const layer = () =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const config = yield* AppConfig
      return Option.match(config.databaseUrl, {
        onSome: (url) =>
          Layer.merge(
            postgresLayer(url, connectSchedule(config.databaseConnectRetrySeconds), config.databasePreparedStatements) as Layer.Layer<
              SqlClient.SqlClient | Direct.DirectStatements,
              DatabaseUnavailable
            >,
            Layer.succeed(DatabaseInfo, { backend: "postgres", location: describeUrl(Redacted.value(url)) })
          ),
        onNone: () => {
          const dir = config.dataDir === "memory://" ? "memory://" : path.resolve(config.dataDir, "pglite")
          if (dir !== "memory://") fs.mkdirSync(dir, { recursive: true })
          return Layer.merge(
            PgliteClient.layer({ dataDir: dir, sharedBuffersMb: config.pgliteSharedBuffersMb, wasmTier: config.pgliteWasmTier }).pipe(
              Layer.catchAll((error) => Layer.fail(new DatabaseUnavailable({ message: error.message, cause: error })))
            ),
            Layer.succeed(DatabaseInfo, { backend: "pglite", location: dir })
          )
        }
      })
    })
  )

/** One round trip to the database, for the health check: fails when it does not answer. */
export const ping = Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`SELECT 1`))
