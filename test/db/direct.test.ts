/**
 * Statements run straight on the driver (db/Direct.ts), on both databases: rows and failures as the
 * client gives them; inside a transaction the statement is part of it; a statement from another
 * fiber never joins an open transaction (PGlite's one connection waits for its permit); with tracing
 * on the statement keeps its `sql.execute` span; a statement is prepared on its connection (named, so
 * it is parsed and planned once there), unless DATABASE_PREPARED_STATEMENTS is off on PostgreSQL.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { ConfigProvider, Deferred, Effect, Exit, Fiber, Layer, ManagedRuntime, Option, Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as AppConfig from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import { DirectStatements } from "../../src/db/Direct.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"

const databaseLayer = (db: TestDatabase, extra: ReadonlyArray<[string, string]> = []) =>
  Database.layer().pipe(
    Layer.provide(AppConfig.layer),
    Layer.provide(
      Layer.setConfigProvider(
        ConfigProvider.fromMap(
          new Map([["DATA_DIR", db.dataDir], ...(db.databaseUrl ? [["DATABASE_URL", db.databaseUrl] as [string, string]] : []), ...extra])
        )
      )
    )
  )

/** The statements prepared on the connection that runs this one, which is among them when it is. */
const preparedHere = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { rows } = yield* DirectStatements
  return yield* rows(
    sql<
      { name: string; statement: string }
    >`SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE ${"%pg_prepared_statements%"}`
  )
})

/** As in the server, where tracing is off unless an OTLP endpoint is set. */
const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withTracerEnabled(effect, false)

describe.each(backends)("direct statements (%s)", (backend) => {
  let db: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | DirectStatements, unknown>
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | DirectStatements>) => runtime.runPromise(untraced(effect))
  const ids = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql<{ id: string }>`SELECT id FROM direct_probe ORDER BY id`).map((row) => row.id)
  })

  beforeAll(async () => {
    db = await createTestDatabase(backend)
    runtime = ManagedRuntime.make(databaseLayer(db))
    await runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`CREATE TABLE direct_probe (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), doc jsonb)`
      )
    )
  })
  afterAll(async () => {
    await runtime?.dispose()
    await db?.drop()
  })

  it("answers the rows the client would, and fails with the driver's error as an SqlError", async () => {
    const rows = await run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { rows } = yield* DirectStatements
        yield* rows(sql`INSERT INTO direct_probe ${sql.insert({ id: "a", doc: JSON.stringify({ n: 1 }) })}`)
        const direct = yield* rows(sql<{ id: string; at: Date; doc: unknown }>`SELECT id, at, doc FROM direct_probe WHERE id = ${"a"}`)
        const viaClient = yield* sql<{ id: string; at: Date; doc: unknown }>`SELECT id, at, doc FROM direct_probe WHERE id = ${"a"}`
        return { direct, viaClient }
      })
    )
    expect(rows.direct).toEqual(rows.viaClient)
    expect(rows.direct[0]!.at).toBeInstanceOf(Date)
    expect(rows.direct[0]!.doc).toEqual({ n: 1 })

    const duplicate = await runtime.runPromiseExit(
      untraced(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { rows } = yield* DirectStatements
        return yield* rows(sql`INSERT INTO direct_probe (id) VALUES (${"a"})`)
      }))
    )
    expect(Exit.isFailure(duplicate)).toBe(true)
    const error = Exit.isFailure(duplicate)
      ? Option.getOrUndefined(
        Exit.causeOption(duplicate).pipe(Option.flatMap((cause) => Option.fromNullable(cause._tag === "Fail" ? cause.error : undefined)))
      )
      : undefined
    expect(error).toBeInstanceOf(SqlError)
    expect(((error as SqlError).cause as { code?: string }).code).toBe("23505")
  })

  it("is part of the transaction it runs in: rolled back with it", async () => {
    const failed = await runtime.runPromiseExit(
      untraced(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { rows } = yield* DirectStatements
        yield* sql.withTransaction(
          Effect.zipRight(rows(sql`INSERT INTO direct_probe (id) VALUES (${"in-transaction"})`), Effect.fail("roll back" as const))
        )
      }))
    )
    expect(Exit.isFailure(failed)).toBe(true)
    expect(await run(ids)).not.toContain("in-transaction")
  })

  it("never joins another fiber's open transaction", async () => {
    const seen = await run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { rows } = yield* DirectStatements
        const inserted = yield* Deferred.make<void>()
        const done = yield* Deferred.make<void>()
        // Holds a transaction open with an uncommitted row, then rolls it back.
        const holder = yield* Effect.fork(
          Effect.exit(
            sql.withTransaction(
              Effect.gen(function*() {
                yield* sql`INSERT INTO direct_probe (id) VALUES (${"uncommitted"})`
                yield* Deferred.succeed(inserted, undefined)
                yield* Effect.race(Deferred.await(done), Effect.sleep("300 millis"))
                return yield* Effect.fail("roll back" as const)
              })
            )
          )
        )
        yield* Deferred.await(inserted)
        // On PostgreSQL another connection answers at once; on PGlite it waits for the permit.
        const count = yield* Effect.fork(rows(sql<{ n: number }>`SELECT count(*)::int AS n FROM direct_probe WHERE id = ${"uncommitted"}`))
        yield* Effect.sleep("50 millis")
        yield* Deferred.succeed(done, undefined)
        yield* Fiber.join(holder)
        return (yield* Fiber.join(count))[0]!.n
      })
    )
    expect(seen).toBe(0)
  })

  it("prepares the statement on its connection, under a name of its own, and answers the same after", async () => {
    const first = await run(preparedHere)
    const again = await run(preparedHere)
    expect(first.map((row) => row.name)).toEqual([expect.stringMatching(/^cairn_\d+$/)])
    expect(first[0]!.statement).toContain("FROM pg_prepared_statements")
    expect(again).toEqual(first)
    // A failure leaves the prepared statement usable: the same text fails, then succeeds with other values.
    const insert = (id: string) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { rows } = yield* DirectStatements
        return yield* rows(sql<{ id: string }>`INSERT INTO direct_probe (id) VALUES (${id}) RETURNING id`)
      })
    await run(insert("prepared-1"))
    const duplicate = await runtime.runPromiseExit(untraced(insert("prepared-1")))
    expect(Exit.isFailure(duplicate)).toBe(true)
    expect(await run(insert("prepared-2"))).toEqual([{ id: "prepared-2" }])
  })

  it("prepares a statement afresh when a migration changed the type of what it returns", async () => {
    const read = Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { rows } = yield* DirectStatements
      return yield* rows(sql<{ n: unknown }>`SELECT n FROM direct_widen WHERE id = ${1}`)
    })
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE direct_widen (id int PRIMARY KEY, n int NOT NULL)`))
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO direct_widen VALUES (1, 7)`))
    expect(await run(read)).toEqual([{ n: 7 }])
    expect(await run(read)).toEqual([{ n: 7 }])
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE direct_widen ALTER COLUMN n TYPE text`))
    expect(await run(read)).toEqual([{ n: "7" }])
    expect(await run(read)).toEqual([{ n: "7" }])
  })

  it("keeps the statement's span when tracing is on", async () => {
    const names: Array<string> = []
    await runtime.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { rows } = yield* DirectStatements
        const native = yield* Effect.tracer
        const recording = Tracer.make({
          span: (...args) => {
            names.push(args[0])
            return native.span(...args)
          },
          context: (f, fiber) => native.context(f, fiber)
        })
        yield* Effect.withTracer(rows(sql`SELECT 1`), recording)
      }).pipe(Effect.withTracerEnabled(true))
    )
    expect(names).toContain("sql.execute")
  })
})

describe("direct statements with DATABASE_PREPARED_STATEMENTS=false (postgres)", () => {
  let db: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | DirectStatements, unknown>
  beforeAll(async () => {
    db = await createTestDatabase("postgres")
    runtime = ManagedRuntime.make(databaseLayer(db, [["DATABASE_PREPARED_STATEMENTS", "false"]]))
  })
  afterAll(async () => {
    await runtime?.dispose()
    await db?.drop()
  })

  it("runs every statement unnamed, for a pooler that keeps no prepared statements", async () => {
    expect(await runtime.runPromise(untraced(preparedHere))).toEqual([])
    expect(await runtime.runPromise(untraced(preparedHere))).toEqual([])
  })
})
