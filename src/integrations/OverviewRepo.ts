/** SQL for the overview an integration may read (mission control's dashboard): one query per part. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, repository } from "../db/Repository.ts"

/** A `timestamptz` (a `Date` from both drivers) as the overview shows it: ISO 8601 text. */
const IsoText = Schema.transform(Schema.DateFromSelf, Schema.String, {
  strict: true,
  decode: (date) => date.toISOString(),
  encode: (text) => new Date(text)
})

const ChannelRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  bot_id: Schema.String,
  last_activity_at: Schema.NullOr(IsoText)
})
const ActiveRunRow = Schema.Struct({
  run_id: Schema.String,
  session_id: Schema.String,
  bot_id: Schema.String,
  channel_id: Schema.NullOr(Schema.String),
  started_at: IsoText
})
/** Counts as text (`::text`): a bigint is text from node-postgres. */
const TaskCountsRow = Schema.Struct({ queued: Schema.NumberFromString, running: Schema.NumberFromString })
const FailedTaskRow = Schema.Struct({
  id: Schema.String,
  bot_id: Schema.String,
  channel_id: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(IsoText)
})
const HeartbeatRow = Schema.Struct({ channel_id: Schema.String, next_at: IsoText })

export class OverviewRepo extends Effect.Service<OverviewRepo>()("cairn/OverviewRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return repository("OverviewRepo", {
      channels: decodeRows(ChannelRow)(sql`
          SELECT c.id, c.name, c.bot_id,
                 (SELECT max(m.created_at) FROM sessions s JOIN messages m ON m.session_id = s.id WHERE s.channel_id = c.id) AS last_activity_at
            FROM channels c ORDER BY last_activity_at DESC NULLS LAST, c.name LIMIT 500`),
      activeRuns: decodeRows(ActiveRunRow)(sql`
          SELECT r.id AS run_id, r.session_id, s.bot_id, s.channel_id, r.created_at AS started_at
            FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.status = 'running' ORDER BY r.created_at`),
      taskCounts: Effect.map(
        decodeRows(TaskCountsRow)(sql`
          SELECT count(*) FILTER (WHERE status = 'pending')::text AS queued, count(*) FILTER (WHERE status = 'running')::text AS running FROM tasks`),
        (rows) => ({ queued: rows[0]?.queued ?? 0, running: rows[0]?.running ?? 0 })
      ),
      failedTasks: decodeRows(FailedTaskRow)(sql`
          SELECT id, bot_id, channel_id, error, completed_at FROM tasks WHERE status = 'failed' ORDER BY completed_at DESC NULLS LAST LIMIT 20`),
      heartbeats: decodeRows(HeartbeatRow)(sql`
          SELECT channel_id, next_at FROM channel_heartbeats WHERE enabled AND next_at IS NOT NULL ORDER BY next_at LIMIT 50`)
    })
  })
}) {}
