/**
 * What one statement costs the server's CPU through @effect/sql (as Cairn's repositories run them)
 * against the same statement through the bare `pg` driver, on PostgreSQL, interleaved rounds,
 * sequential and at 50 in flight. CPU is this process's (process.cpuUsage), per statement.
 *
 *   npx tsx bench/sqlCost.ts [statements=2000] [rounds=5]
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import pg from "pg"
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
  await Promise.all(Array.from({ length: n }, async () => { while (next++ < count) await one() }))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

await withDatabase(
  db,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const runtime = yield* Effect.runtime<never>()
    const viaEffect = (i: number) => sql`SELECT ${String(i)}::text AS id, now() AS at`
    const results: Record<string, Array<number>> = { "pg, sequential": [], "@effect/sql, sequential": [], "pg, 50 in flight": [], "@effect/sql, 50 in flight": [] }
    for (let round = 0; round < rounds + 1; round++) {
      const rs = {
        "pg, sequential": yield* Effect.promise(() => cpuOf(async () => { for (let i = 0; i < count; i++) await pool.query(text, [String(i)]) })),
        "@effect/sql, sequential": yield* Effect.promise(() => cpuOf(() => Effect.runPromise(Effect.provide(Effect.gen(function* () { for (let i = 0; i < count; i++) yield* viaEffect(i) }), runtime.context)))),
        "pg, 50 in flight": yield* Effect.promise(() => cpuOf(() => inFlight(50, () => pool.query(text, ["x"])))),
        "@effect/sql, 50 in flight": yield* Effect.promise(() => cpuOf(() => Effect.runPromise(Effect.provide(Effect.forEach(Array.from({ length: count }, (_, i) => i), viaEffect, { concurrency: 50, discard: true }), runtime.context))))
      }
      if (round > 0) for (const [k, v] of Object.entries(rs)) results[k]!.push(v)
    }
    for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(28)} ${median(v).toFixed(1)} µs CPU per statement`)
  })
)
await pool.end()
await db.drop()
