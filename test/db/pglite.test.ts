/**
 * The embedded database opens and answers on either of V8's WebAssembly tiers (PGLITE_WASM_TIER);
 * its statements with parameters, prepared once and run in one call, answer what `PGlite.query`
 * answers, past the bound on how many stay prepared, and after a failure.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { PGlite } from "@electric-sql/pglite"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { pgliteWasmTiers } from "../../src/config/AppConfig.ts"
import * as PgliteClient from "../../src/db/PgliteClient.ts"
import { scaled } from "../support/time.ts"

describe("PgliteClient", () => {
  for (const wasmTier of pgliteWasmTiers) {
    it(`opens and answers compiled for the ${wasmTier} tier`, async () => {
      const rows = await Effect.runPromise(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE notes (id serial PRIMARY KEY, body text, embedding vector(3))`
          yield* sql`INSERT INTO notes (body, embedding) VALUES ('first', '[1,0,0]'), ('second', '[0,1,0]')`
          return yield* sql<{ body: string }>`SELECT body FROM notes ORDER BY embedding <-> '[0,0.9,0]' LIMIT 1`
        }).pipe(Effect.provide(PgliteClient.layer({ dataDir: "memory://", sharedBuffersMb: 16, wasmTier })), Effect.scoped)
      )
      expect(rows).toEqual([{ body: "second" }])
    }, scaled(60_000))
  }
})

describe("PgliteClient's prepared statements", () => {
  const layer = PgliteClient.layer({ dataDir: "memory://", sharedBuffersMb: 16, wasmTier: "baseline" })
  const table = `CREATE TABLE kinds (id int PRIMARY KEY, body text, flag boolean, amount numeric, big bigint, at timestamptz,
    doc jsonb, tags text[], counts int[], raw bytea, embedding vector(2))`
  const insert = `INSERT INTO kinds VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`
  const values: ReadonlyArray<ReadonlyArray<unknown>> = [
    [
      1,
      "plain 'quoted' \\ text",
      true,
      "12.50",
      "9007199254740993",
      new Date("2026-11-26T12:00:00.123Z"),
      { nested: [1, "two", null] },
      ["a", "b,c", "d\"e"],
      [1, 2, 3],
      new Uint8Array([0, 255, 7]),
      "[0.5,1]"
    ],
    [2, null, false, 3, 42, "2026-01-01T00:00:00Z", JSON.stringify("a json string"), [], [], null, null]
  ]

  it("answers exactly what PGlite.query answers, for every kind of value", async () => {
    const reference = await PGlite.create("memory://", { extensions: { vector: (await import("@electric-sql/pglite-pgvector")).vector } })
    try {
      await reference.exec(`CREATE EXTENSION IF NOT EXISTS vector; ${table}`)
      const expected = []
      for (const row of values) expected.push((await reference.query(insert, row as Array<unknown>)).rows)
      expected.push((await reference.query("SELECT * FROM kinds WHERE id = ANY($1) ORDER BY id", [[1, 2]])).rows)
      const actual = await Effect.runPromise(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql.unsafe(table)
          const answers = []
          for (const row of values) answers.push(yield* sql.unsafe(insert, row))
          answers.push(yield* sql.unsafe("SELECT * FROM kinds WHERE id = ANY($1) ORDER BY id", [[1, 2]]))
          return answers
        }).pipe(Effect.provide(layer), Effect.scoped)
      )
      expect(actual).toEqual(expected)
      expect(actual[2]![0]).toMatchObject({ doc: { nested: [1, "two", null] }, tags: ["a", "b,c", "d\"e"], counts: [1, 2, 3] })
    } finally {
      await reference.close()
    }
  }, scaled(60_000))

  it("keeps at most 256 statements prepared, and runs one it closed again", async () => {
    const { answers, prepared } = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const answers: Array<number> = []
        // 300 distinct statements, then the first again (closed by then, so prepared anew).
        for (let n = 0; n < 300; n++) answers.push((yield* sql.unsafe<{ n: number }>(`SELECT $1::int + ${n} AS n`, [1]))[0]!.n)
        answers.push((yield* sql.unsafe<{ n: number }>(`SELECT $1::int + 0 AS n`, [5]))[0]!.n)
        const prepared = yield* sql.unsafe<{ count: number }>(
          "SELECT count(*)::int AS count FROM pg_prepared_statements WHERE name LIKE $1",
          ["cairn_%"]
        )
        // Planned as PostgreSQL plans by default (the tables get statistics: db/PgliteAnalyze.ts).
        const mode = yield* sql.unsafe<{ plan_cache_mode: string }>("SHOW plan_cache_mode")
        expect(mode).toEqual([{ plan_cache_mode: "auto" }])
        return { answers, prepared: prepared[0]!.count }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(answers).toEqual([...Array.from({ length: 300 }, (_, n) => n + 1), 5])
    expect(prepared).toBe(256)
  }, scaled(60_000))

  it("fails with the database's error, prepares nothing for a statement that does not parse, and goes on", async () => {
    const outcome = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe("CREATE TABLE once (id int PRIMARY KEY)")
        const add = (id: number) => sql.unsafe<{ id: number }>("INSERT INTO once VALUES ($1) RETURNING id", [id])
        yield* add(1)
        const duplicate = yield* Effect.exit(add(1))
        const broken = yield* Effect.exit(sql.unsafe("SELEC $1", [1]))
        const after = yield* add(2)
        const prepared = yield* sql.unsafe<{ statement: string }>("SELECT statement FROM pg_prepared_statements WHERE statement LIKE $1", [
          "SELEC %"
        ])
        return { duplicate, broken, after, prepared }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const failure = (
      exit: Exit.Exit<unknown, unknown>
    ) => (Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined)
    expect(failure(outcome.duplicate)).toBeInstanceOf(SqlError)
    expect(((failure(outcome.duplicate) as SqlError).cause as { code?: string }).code).toBe("23505")
    expect(((failure(outcome.broken) as SqlError).cause as { code?: string }).code).toBe("42601")
    expect(outcome.after).toEqual([{ id: 2 }])
    expect(outcome.prepared).toEqual([])
  }, scaled(60_000))
})
