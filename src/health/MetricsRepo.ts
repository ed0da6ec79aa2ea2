/**
 * SQL for the levels a scrape samples from the database: runs and tasks, which every process of a
 * cluster shares (the `cluster` figures are the same on each; `process` ones are this one's).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, repository } from "../db/Repository.ts"

const LevelsRow = Schema.Struct({
  runs_here: Schema.Number,
  runs_all: Schema.Number,
  runs_queued: Schema.Number,
  tasks_pending: Schema.Number,
  tasks_running: Schema.Number,
  oldest_pending_seconds: Schema.NullOr(Schema.Number)
})

export class MetricsRepo extends Effect.Service<MetricsRepo>()("cairn/MetricsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return repository("MetricsRepo", {
      /**
       * In one round trip; `owners` is a LIKE pattern of this process's run holders. A queued run
       * is a pending task whose session has a run going.
       */
      levels: (owners: string) =>
        sql`SELECT (SELECT count(*) FROM runs WHERE status = 'running' AND owner LIKE ${owners})::int AS runs_here,
                   (SELECT count(*) FROM runs WHERE status = 'running')::int AS runs_all,
                   (SELECT count(*) FROM tasks t WHERE t.status = 'pending'
                      AND EXISTS (SELECT 1 FROM runs r WHERE r.session_id = t.session_id AND r.status = 'running'))::int AS runs_queued,
                   (SELECT count(*) FROM tasks WHERE status = 'pending')::int AS tasks_pending,
                   (SELECT count(*) FROM tasks WHERE status = 'running')::int AS tasks_running,
                   (SELECT extract(epoch FROM clock_timestamp() - min(created_at))::float8 FROM tasks WHERE status = 'pending')
                     AS oldest_pending_seconds`.pipe(
          decodeRows(LevelsRow),
          Effect.map((rows) => rows[0]!)
        )
    })
  })
}) {}
