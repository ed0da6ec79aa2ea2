/**
 * Relaxed commits: `synchronous_commit = off` for one transaction. PostgreSQL then acknowledges
 * the commit before its WAL reaches the disk (it follows within ~0.6 s). The write still survives
 * any crash of Cairn itself; only a crash of the PostgreSQL server in that window loses it. Used
 * for bookkeeping while a turn runs (its event log, its tool steps): the turn's final message is
 * committed durably, and that flush carries every relaxed commit before it to the disk as well.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { transactions } from "./Repository.ts"

export const relaxed =
  (sql: SqlClient.SqlClient, backend: "pglite" | "postgres") =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
    // PGlite runs with fsync off: every commit is already as cheap as a relaxed one.
    backend === "pglite"
      ? (effect as Effect.Effect<A, Exclude<E, SqlError>, R>)
      : transactions(sql)(Effect.zipRight(Effect.orDie(sql`SET LOCAL synchronous_commit TO OFF`), effect))

/**
 * The same for a statement on its own, outside a transaction: a `FROM` item (one row) whose
 * `set_config(..., true)` turns `synchronous_commit` off for the statement's own transaction, that
 * is, for its commit. Joined into the statement, it makes one round trip where `relaxed` makes four
 * (BEGIN, SET LOCAL, the statement, COMMIT). On PGlite it changes nothing, as above.
 */
export const relaxedFromItem = "(SELECT set_config('synchronous_commit', 'off', true)) AS relaxed_commit"
