/**
 * Relaxed commits: `synchronous_commit = off` for one transaction. PostgreSQL then acknowledges
 * the commit before its WAL reaches the disk (it follows within ~0.6 s). The write still survives
 * any crash of Cairn itself; only a crash of the PostgreSQL server in that window loses it. Used
 * for bookkeeping while a turn runs (its event log, its tool steps): the turn's final message is
 * committed durably, and that flush carries every relaxed commit before it to the disk as well.
 * PGlite runs with `fsync` off: every commit there is already as cheap as a relaxed one.
 */

import { type SqlClient, Statement } from "@effect/sql"

/**
 * Data-modifying statements that another statement carries as parts of its `WITH`, so they commit
 * with it, in its round trip (a turn's answer with its run's end, runs/Repo.ts). Each part is named
 * (a statement carries one writer's parts: the names are fixed, so its text, and its prepared plan,
 * stays the same from turn to turn).
 */
export interface CarriedWrites {
  readonly parts: ReadonlyArray<readonly [name: string, write: Statement.Statement<unknown>]>
  /**
   * What the writer learns back: `value`, a scalar subquery over its parts, which the carrying
   * statement answers as a column; `take` gets it (null when the parts wrote nothing) once that
   * statement has committed.
   */
  readonly report?: { readonly value: Statement.Statement<unknown>; readonly take: (value: unknown) => void } | undefined
}

/**
 * Writes that commit only when the statement carrying them did its own work: each reads from the
 * `WITH` part named `gate`, which answers one row when it did and none when not (a run's lock
 * with the message that starts it, runs/Repo.ts).
 */
export type GatedWrites = (gate: string) => CarriedWrites

const joinParts = Statement.join(", ", false)

/** Carried parts as a statement's `WITH` list: `name AS (write), ...`. */
export const withParts = (sql: SqlClient.SqlClient, parts: CarriedWrites["parts"]) =>
  joinParts(parts.map(([name, write]) => sql`${sql.literal(name)} AS (${write})`))

/**
 * A `FROM` item (one row) whose `set_config(..., true)` turns `synchronous_commit` off for the
 * transaction of the statement that joins it in: on its own, that is the statement's own commit, so
 * one round trip does what BEGIN, SET LOCAL, the statement and COMMIT did. Inside a transaction it
 * would hold to that transaction's end, so only bookkeeping statements made on their own take it.
 */
export const relaxedFromItem = "(SELECT set_config('synchronous_commit', 'off', true)) AS relaxed_commit"

/** What a statement's `FROM` list gains when it commits `relaxed`: the item, or nothing. */
export const relaxedJoin = (relaxed: boolean) => (relaxed ? `, ${relaxedFromItem}` : "")
