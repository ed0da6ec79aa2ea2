/** SQL for the audit of repository pulls: one row per pull, never updated. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, repository } from "../db/Repository.ts"
import { RepositoryPull } from "./Model.ts"

/** A pull as stored: the API's `RepositoryPull` as the drivers hand it over (jsonb parsed, timestamps as `Date`). */
const RepositoryPullRow = Schema.typeSchema(Schema.Struct(RepositoryPull.fields))

const columns = "id, status, requested_by, before_commit, after_commit, changed_files, synced, error, pulled_at"

export class RepositoryPullsRepo extends Effect.Service<RepositoryPullsRepo>()("cairn/RepositoryPullsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(RepositoryPullRow)
    return repository("RepositoryPullsRepo", {
      record: (pull: Omit<typeof RepositoryPullRow.Type, "pulled_at">) =>
        rows(sql`INSERT INTO repository_pulls (id, status, requested_by, before_commit, after_commit, changed_files, synced, error)
                 VALUES (${pull.id}, ${pull.status}, ${pull.requested_by}, ${pull.before_commit}, ${pull.after_commit},
                         ${JSON.stringify(pull.changed_files)}::jsonb, ${JSON.stringify(pull.synced)}::jsonb, ${pull.error})
                 RETURNING ${sql.literal(columns)}`).pipe(Effect.map((inserted) => new RepositoryPull(inserted[0]!))),
      latest: (limit: number) =>
        rows(sql`SELECT ${sql.literal(columns)} FROM repository_pulls ORDER BY pulled_at DESC, id LIMIT ${limit}`).pipe(
          Effect.map((found) => found.map((row) => new RepositoryPull(row)))
        )
    })
  })
}) {}
