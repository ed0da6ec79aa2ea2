/**
 * Sealing what an older release stored in the clear. A migration names the column in
 * `pending_reseals` (the key is the application's, so SQL cannot seal); the domain that owns the
 * column seals its rows at startup and deletes the name. Sealing is idempotent (a sealed value is
 * never sealed again), so two processes starting together may both do it.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { tracedFn } from "../telemetry/Spans.ts"

export interface ResealColumn<V> {
  /** The rows that may hold something to seal, as [key, value]. */
  readonly read: Effect.Effect<ReadonlyArray<readonly [string, V]>, SqlError>
  readonly seal: (value: V) => V
  readonly write: (key: string, value: V) => Effect.Effect<unknown, SqlError>
}

/** Seals a column's rows once, when `name` is pending; answers how many rows changed. */
export const resealPending = tracedFn("Reseal.pending", <V>(name: string, column: ResealColumn<V>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pending = yield* sql`SELECT name FROM pending_reseals WHERE name = ${name}`
    if (pending.length === 0) return 0
    let changed = 0
    for (const [key, value] of yield* column.read) {
      const sealed = column.seal(value)
      if (JSON.stringify(sealed) === JSON.stringify(value)) continue
      yield* column.write(key, sealed)
      changed += 1
    }
    yield* sql`DELETE FROM pending_reseals WHERE name = ${name}`
    if (changed > 0) yield* Effect.logInfo(`Sealed the credentials stored in the clear in ${changed} row(s) of ${name}`)
    return changed
  }).pipe(Effect.orDie))

type Config = Record<string, unknown>

/** jsonb comes back parsed from PostgreSQL and as text from PGlite's paths: a config object either way. */
const configOf = (value: unknown): Config => (typeof value === "string" ? (JSON.parse(value) as Config) : (value as Config))

/**
 * The rows of a table's jsonb `dispatch_config` that hold a URL, for `resealPending`; `table` and
 * `key` are the caller's own constant names, never input.
 */
export const dispatchConfigColumn = (
  sql: SqlClient.SqlClient,
  table: string,
  key: string,
  seal: (config: Config) => Config
): ResealColumn<Config> => ({
  read: Effect.map(
    sql.unsafe<{ key: string; dispatch_config: unknown }>(
      `SELECT ${key} AS key, dispatch_config FROM ${table} WHERE dispatch_config::text LIKE '%://%'`
    ),
    (rows) => rows.map((row) => [String(row.key), configOf(row.dispatch_config)] as const)
  ),
  seal,
  write: (id, config) => sql.unsafe(`UPDATE ${table} SET dispatch_config = $1::jsonb WHERE ${key} = $2`, [JSON.stringify(config), id])
})
