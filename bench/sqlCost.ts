/**
 * What one statement costs the server's CPU through @effect/sql (as Cairn's repositories run them),
 * through `DirectStatements` (db/Direct.ts, as a turn's statements run) and through the bare `pg`
 * driver, on PostgreSQL, interleaved rounds, sequential and at 50 in flight, tracing off as in the
 * server. CPU is this process's (process.cpuUsage), per statement.
 *
 *   npx tsx bench/sqlCost.ts [statements=2000] [rounds=5]
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import pg from "pg"
import { DirectStatements } from "../src/db/Direct.ts"
import { createTestDatabase, withDatabase } from "../test/support/database.ts"

const count = Number(process.argv[2] ?? 2000)
const rounds = Number(process.argv[3] ?? 5)
const db = await createTestDatabase("postgres")
const pool = new pg.Pool({ connectionString: db.databaseUrl, max: 10 })
const text = "SELECT $1::text AS id, now() AS at"

const cpuOf = async (run: () => Promise<unknown>) => {
  const before = process.cpuUsage()
  await run()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / count
}
const inFlight = async (n: number, one: () => Promise<unknown>) => {
  let next = 0
  await Promise.all(Array.from({ length: n }, async () => {
    while (next++ < count) await one()
  }))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

await withDatabase(
  db,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { rows } = yield* DirectStatements
    const runtime = yield* Effect.runtime<never>()
    const viaEffect = (i: number) => sql`SELECT ${String(i)}::text AS id, now() AS at`
    const viaDirect = (i: number) => rows(sql`SELECT ${String(i)}::text AS id, now() AS at`)
    const run = (effect: Effect.Effect<unknown, unknown>) =>
      Effect.runPromise(Effect.withTracerEnabled(Effect.provide(effect, runtime.context), false))
    const sequential = (one: (i: number) => Effect.Effect<unknown, unknown>) => () =>
      run(Effect.gen(function*() {
        for (let i = 0; i < count; i++) yield* one(i)
      }))
    const concurrent = (one: (i: number) => Effect.Effect<unknown, unknown>) => () =>
      run(Effect.forEach(Array.from({ length: count }, (_, i) => i), one, { concurrency: 50, discard: true }))
    const results: Record<string, Array<number>> = {}
    for (let round = 0; round < rounds + 1; round++) {
      const rs = {
        "pg, sequential": yield* Effect.promise(() =>
          cpuOf(async () => {
            for (let i = 0; i < count; i++) await pool.query(text, [String(i)])
          })
        ),
        "@effect/sql, sequential": yield* Effect.promise(() => cpuOf(sequential(viaEffect))),
        "direct, sequential": yield* Effect.promise(() => cpuOf(sequential(viaDirect))),
        "pg, 50 in flight": yield* Effect.promise(() => cpuOf(() => inFlight(50, () => pool.query(text, ["x"])))),
        "@effect/sql, 50 in flight": yield* Effect.promise(() => cpuOf(concurrent(viaEffect))),
        "direct, 50 in flight": yield* Effect.promise(() => cpuOf(concurrent(viaDirect)))
      }
      if (round > 0) { for (const [k, v] of Object.entries(rs)) (results[k] ??= []).push(v) }
    }
    for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(28)} ${median(v).toFixed(1)} µs CPU per statement`)
  })
)
await pool.end()
await db.drop()
