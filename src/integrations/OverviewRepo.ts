/** SQL for the overview an integration may read (mission control's dashboard): one query per part. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repository } from "../db/Repository.ts"

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString())

export class OverviewRepo extends Effect.Service<OverviewRepo>()("cairn/OverviewRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return repository("OverviewRepo", {
      channels: Effect.map(
        sql<{ id: string; name: string; bot_id: string; last_activity_at: Date | null }>`
          SELECT c.id, c.name, c.bot_id,
                 (SELECT max(m.created_at) FROM sessions s JOIN messages m ON m.session_id = s.id WHERE s.channel_id = c.id) AS last_activity_at
            FROM channels c ORDER BY last_activity_at DESC NULLS LAST, c.name LIMIT 500`,
        (rows) => rows.map((row) => ({ ...row, last_activity_at: iso(row.last_activity_at) }))
      ),
      activeRuns: Effect.map(
        sql<{ run_id: string; session_id: string; bot_id: string; channel_id: string | null; started_at: Date }>`
          SELECT r.id AS run_id, r.session_id, s.bot_id, s.channel_id, r.created_at AS started_at
            FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.status = 'running' ORDER BY r.created_at`,
        (rows) => rows.map((row) => ({ ...row, started_at: iso(row.started_at)! }))
      ),
      taskCounts: Effect.map(
        sql<{ queued: string; running: string }>`
          SELECT count(*) FILTER (WHERE status = 'pending')::text AS queued, count(*) FILTER (WHERE status = 'running')::text AS running FROM tasks`,
        (rows) => ({ queued: Number(rows[0]?.queued ?? 0), running: Number(rows[0]?.running ?? 0) })
      ),
      failedTasks: Effect.map(
        sql<{ id: string; bot_id: string; channel_id: string | null; error: string | null; completed_at: Date | null }>`
          SELECT id, bot_id, channel_id, error, completed_at FROM tasks WHERE status = 'failed' ORDER BY completed_at DESC NULLS LAST LIMIT 20`,
        (rows) => rows.map((row) => ({ ...row, completed_at: iso(row.completed_at) }))
      ),
      heartbeats: Effect.map(
        sql<{ channel_id: string; next_at: Date }>`
          SELECT channel_id, next_at FROM channel_heartbeats WHERE enabled AND next_at IS NOT NULL ORDER BY next_at LIMIT 50`,
        (rows) => rows.map((row) => ({ channel_id: row.channel_id, next_at: iso(row.next_at)! }))
      )
    })
  })
}) {}
