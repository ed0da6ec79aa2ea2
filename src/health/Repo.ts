/**
 * SQL for readiness. Unlike other repositories' its failure is a value (an `Either`), not a defect:
 * a database that does not answer is what readiness reports, not a server error.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, repository } from "../db/Repository.ts"

const StateRow = Schema.Struct({
  /** PostgreSQL's `transaction_read_only`: `on` on a standby or a database set read-only. */
  read_only: Schema.String,
  latest_migration: Schema.NullOr(Schema.Number)
})

export class HealthRepo extends Effect.Service<HealthRepo>()("cairn/HealthRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return repository("HealthRepo", {
      /** In one round trip: whether the database takes writes, and the latest migration applied. */
      state: sql`SELECT current_setting('transaction_read_only') AS read_only,
                        (SELECT max(migration_id) FROM cairn_migrations) AS latest_migration`.pipe(
        decodeRows(StateRow),
        Effect.map((rows) => rows[0]!),
        Effect.either
      )
    })
  })
}) {}
