/**
 * PGlite runs no autovacuum, so Cairn analyzes its tables as they grow (src/db/PgliteAnalyze.ts):
 * a table grown past a fifth and 8 pages since its last analyze gets statistics for the columns its
 * indexes cover, on a small sample, and is left alone until it grows that much again. The check
 * runs every 10 s while statements run, and every 5 minutes on an idle server.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { it as effectIt } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { describe, expect, it } from "vitest"
import { analyzeGrown, analyzeSql, analyzeWhileBusy, grownTablesSql } from "../../src/db/PgliteAnalyze.ts"
import * as PgliteClient from "../../src/db/PgliteClient.ts"
import { scaled } from "../support/time.ts"

const layer = PgliteClient.layer({ dataDir: "memory://", sharedBuffersMb: 16, wasmTier: "baseline" })

describe("PgliteAnalyze", () => {
  it("analyzes a grown table on its indexed columns, and not again until it grows by a fifth", async () => {
    const seen = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const run = (statement: string) => sql.unsafe(statement)
        const grown = () => Effect.map(run(grownTablesSql), (rows) => rows.map((row) => (row as { name: string }).name))
        const analyzed = () =>
          Effect.map(
            sql<{ attname: string }>`SELECT attname FROM pg_stats WHERE tablename = 'notes' ORDER BY attname`,
            (rows) => rows.map((row) => row.attname)
          )
        const add = (n: number) =>
          sql`INSERT INTO notes (session, body) SELECT gen_random_uuid(), repeat('a note ', 20) FROM generate_series(1, ${n})`

        yield* sql`CREATE TABLE notes (id serial PRIMARY KEY, session uuid NOT NULL, seq bigserial, body text)`
        yield* sql`CREATE INDEX notes_session_seq ON notes (session, seq)`
        yield* sql`CREATE TABLE small (id int PRIMARY KEY)`
        yield* sql`INSERT INTO small VALUES (1)`
        yield* add(40)
        const whenSmall = yield* grown()

        yield* add(5_000)
        const whenGrown = yield* grown()
        yield* analyzeGrown(run)
        const columns = yield* analyzed()
        const afterAnalyze = yield* grown()
        const pages = (yield* sql<{ relpages: number }>`SELECT relpages FROM pg_class WHERE relname = 'notes'`)[0]!.relpages

        yield* add(500)
        const afterATenth = yield* grown()
        yield* add(1_000)
        const afterAFifth = yield* grown()
        // The sample stays small whatever the default is: ten histogram buckets, eleven bounds.
        yield* analyzeGrown(run)
        const bounds = (yield* sql<{ n: number }>`SELECT array_length(histogram_bounds::text::text[], 1) AS n FROM pg_stats
          WHERE tablename = 'notes' AND attname = 'id'`)[0]!.n
        const target = (yield* sql<{ default_statistics_target: string }>`SHOW default_statistics_target`)[0]!.default_statistics_target
        return { whenSmall, whenGrown, columns, afterAnalyze, pages, afterATenth, afterAFifth, bounds, target }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(seen.whenSmall).toEqual([])
    expect(seen.whenGrown).toEqual(["notes"])
    expect(seen.columns).toEqual(["id", "seq", "session"])
    expect(seen.afterAnalyze).toEqual([])
    expect(seen.pages).toBeGreaterThan(8)
    expect(seen.afterATenth).toEqual([])
    expect(seen.afterAFifth).toEqual(["notes"])
    expect(seen.bounds).toBe(11)
    // Set for the analyze's own transaction only.
    expect(seen.target).toBe("100")
  }, scaled(60_000))

  it("names each table with its indexed columns, and a table without an index whole", () => {
    expect(
      analyzeSql([
        { name: "messages", columns: "id, seq, session_id" },
        { name: "\"Odd name\"", columns: null }
      ])
    ).toBe("SET LOCAL default_statistics_target = 10; ANALYZE messages (id, seq, session_id), \"Odd name\"")
  })
})

describe("PgliteAnalyze's cadence", () => {
  effectIt.effect(
    "checks every 10 s while 50 statements or more ran since the last check, and every 5 minutes when idle",
    () =>
      Effect.gen(function*() {
        let statements = 0
        const checks: Array<number> = []
        const run = (sql: string) =>
          Effect.sync(() => {
            if (sql === grownTablesSql) checks.push(statements)
            return []
          })
        const fiber = yield* Effect.fork(analyzeWhileBusy(() => statements, run))
        const tick = (statementsMeanwhile: number) =>
          Effect.gen(function*() {
            statements += statementsMeanwhile
            yield* TestClock.adjust(Duration.seconds(10))
          })
        // Busy: a check each 10 s.
        for (let i = 0; i < 3; i++) yield* tick(60)
        const whileBusy = checks.length
        // Idle (a few statements: heartbeats): none for 290 s, then one at the 30th tick.
        for (let i = 0; i < 29; i++) yield* tick(1)
        const idleBefore = checks.length
        yield* tick(1)
        const idleAfter = checks.length
        yield* Fiber.interrupt(fiber)
        expect(whileBusy).toBe(3)
        expect(idleBefore).toBe(3)
        expect(idleAfter).toBe(4)
      })
  )
})
