/** SQL for heartbeats and their runs. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { dispatchConfigColumn, resealPending } from "../db/Reseal.ts"
import { Heartbeat, HeartbeatRun } from "./Model.ts"

/**
 * A heartbeat as stored: the API's `Heartbeat` as the driver hands it over (its type side:
 * timestamps as `Date`, the dispatch config sealed rather than masked) and the grid's anchor.
 */
export const HeartbeatRow = Schema.typeSchema(Schema.Struct(Heartbeat.fields)).pipe(
  Schema.extend(Schema.Struct({ anchor: Schema.DateFromSelf }))
)
export type HeartbeatRow = typeof HeartbeatRow.Type

/** A run as stored: the API's `HeartbeatRun` and its channel. */
export const RunRow = Schema.typeSchema(Schema.Struct(HeartbeatRun.fields)).pipe(
  Schema.extend(Schema.Struct({ channel_id: Schema.String }))
)
export type RunRow = typeof RunRow.Type

/** A running heartbeat run with its task's state. */
const SettlingRow = RunRow.pipe(
  Schema.extend(
    Schema.Struct({
      task_status: Schema.NullOr(Schema.String),
      task_result: Schema.NullOr(Schema.String),
      task_error: Schema.NullOr(Schema.String)
    })
  )
)

/** `min(next_at)`: null when no heartbeat is enabled. */
const NextSlotRow = Schema.Struct({ next_at: Schema.NullOr(Schema.DateFromSelf) })

const columns =
  "channel_id, enabled, prompt, interval_seconds, cron, timezone, quiet_start, quiet_end, ends_at, only_when_something, catch_up, dispatch_type, dispatch_config, anchor, next_at, updated_at"
const runColumns = "id, channel_id, slot, trigger, status, task_id, result, error, created_at, finished_at"

export type HeartbeatWrite = Omit<HeartbeatRow, "anchor" | "updated_at" | "next_at"> & { readonly nextAt: Date | null }

export class HeartbeatsRepo extends Effect.Service<HeartbeatsRepo>()("cairn/HeartbeatsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(HeartbeatRow)
    const runs = decodeRows(RunRow)
    const settling = decodeRows(SettlingRow)
    const nextSlot = decodeRows(NextSlotRow)
    return repository("HeartbeatsRepo", {
      /** Seals, once (db/Reseal.ts), the URL credentials an older release stored in the clear. */
      resealDispatchConfigs: (seal: (config: Record<string, unknown>) => Record<string, unknown>) =>
        resealPending("channel_heartbeats.dispatch_config", dispatchConfigColumn(sql, "channel_heartbeats", "channel_id", seal)),
      find: (channelId: string) =>
        rows(sql`SELECT ${sql.literal(columns)} FROM channel_heartbeats WHERE channel_id = ${channelId}`).pipe(Effect.map(firstRow)),
      /** Sets the whole heartbeat; its grid starts again from `anchor`. */
      upsert: (h: HeartbeatWrite, anchor: Date) =>
        rows(
          sql`INSERT INTO channel_heartbeats (channel_id, enabled, prompt, interval_seconds, cron, timezone, quiet_start, quiet_end, ends_at,
                   only_when_something, catch_up, dispatch_type, dispatch_config, anchor, next_at)
                 VALUES (${h.channel_id}, ${h.enabled}, ${h.prompt}, ${h.interval_seconds}, ${h.cron}, ${h.timezone}, ${h.quiet_start}, ${h.quiet_end},
                   ${h.ends_at}, ${h.only_when_something}, ${h.catch_up}, ${h.dispatch_type}, ${
            JSON.stringify(h.dispatch_config)
          }::jsonb, ${anchor}, ${h.nextAt})
                 ON CONFLICT (channel_id) DO UPDATE SET enabled = excluded.enabled, prompt = excluded.prompt, interval_seconds = excluded.interval_seconds,
                   cron = excluded.cron, timezone = excluded.timezone, quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end,
                   ends_at = excluded.ends_at, only_when_something = excluded.only_when_something, catch_up = excluded.catch_up,
                   dispatch_type = excluded.dispatch_type, dispatch_config = excluded.dispatch_config, anchor = excluded.anchor,
                   next_at = excluded.next_at, updated_at = now()
                 RETURNING ${sql.literal(columns)}`
        ).pipe(Effect.map((list) => list[0]!)),
      /** Enabled heartbeats whose slot has come. */
      due: (now: Date) =>
        rows(sql`SELECT ${sql.literal(columns)} FROM channel_heartbeats WHERE enabled AND next_at <= ${now} ORDER BY next_at LIMIT 100`),
      /** The earliest slot of an enabled heartbeat, if any (the scheduler sleeps until it). */
      nextSlot: Effect.map(
        nextSlot(sql`SELECT min(next_at) AS next_at FROM channel_heartbeats WHERE enabled`),
        (found) => found[0]?.next_at ?? undefined
      ),
      /** Moves a heartbeat to its next slot, unless another process moved it first (it read `from`). */
      advance: (channelId: string, from: Date, to: Date | null) =>
        Effect.map(
          // Compared to the millisecond: a Date read back has no microseconds.
          sql`UPDATE channel_heartbeats SET next_at = ${to}
               WHERE channel_id = ${channelId} AND date_trunc('milliseconds', next_at) = date_trunc('milliseconds', ${from}::timestamptz)
               RETURNING channel_id`,
          (moved) => moved.length === 1
        ),
      /** A run for a slot; undefined when that slot already has one. */
      beginRun: (
        run: {
          readonly id: string
          readonly channelId: string
          readonly slot: Date
          readonly trigger: "schedule" | "catch_up" | "manual"
          readonly status: "running" | "quiet"
        }
      ) =>
        runs(sql`INSERT INTO heartbeat_runs (id, channel_id, slot, trigger, status, finished_at)
                 VALUES (${run.id}, ${run.channelId}, ${run.slot}, ${run.trigger}, ${run.status}, ${
          run.status === "quiet" ? new Date() : null
        })
                 ON CONFLICT (channel_id, slot) DO NOTHING RETURNING ${sql.literal(runColumns)}`).pipe(Effect.map(firstRow)),
      /** Whether the channel's heartbeat has a run still going (the next slot waits for it). */
      hasRunning: (channelId: string) =>
        Effect.map(
          sql`SELECT 1 FROM heartbeat_runs WHERE channel_id = ${channelId} AND status = 'running' LIMIT 1`,
          (rows) => rows.length > 0
        ),
      attachTask: (runId: string, taskId: string) =>
        sql`UPDATE heartbeat_runs SET task_id = ${taskId} WHERE id = ${runId}`.pipe(Effect.asVoid),
      /** Running runs whose task has finished. */
      settling: settling(sql`SELECT ${sql.literal(runColumns.split(", ").map((c) => `r.${c}`).join(", "))},
                                    t.status AS task_status, t.result AS task_result, t.error AS task_error
                               FROM heartbeat_runs r LEFT JOIN tasks t ON t.id = r.task_id
                              WHERE r.status = 'running'
                                AND (t.status IN ('complete', 'failed', 'cancelled')
                                     -- No task a minute on: the process firing it stopped before it made one.
                                     OR (r.task_id IS NULL AND r.created_at < now() - interval '1 minute'))
                              ORDER BY r.created_at LIMIT 100`),
      /** Ends a running run; false when another process ended it first (so it posts only once). */
      finish: (runId: string, status: "posted" | "silent" | "failed", result: string | null, error: string | null) =>
        Effect.map(
          sql`UPDATE heartbeat_runs SET status = ${status}, result = ${result}, error = ${error}, finished_at = now()
               WHERE id = ${runId} AND status = 'running' RETURNING id`,
          (ended) => ended.length === 1
        ),
      /** A post that failed after its run was ended as posted. */
      postFailed: (runId: string, error: string) =>
        sql`UPDATE heartbeat_runs SET status = 'failed', error = ${error} WHERE id = ${runId}`.pipe(Effect.asVoid),
      runs: (channelId: string, limit: number) =>
        runs(
          sql`SELECT ${
            sql.literal(runColumns)
          } FROM heartbeat_runs WHERE channel_id = ${channelId} ORDER BY created_at DESC, id LIMIT ${limit}`
        ),
      upcoming: (limit: number) =>
        rows(
          sql`SELECT ${sql.literal(columns)} FROM channel_heartbeats WHERE enabled AND next_at IS NOT NULL ORDER BY next_at LIMIT ${limit}`
        )
    })
  })
}) {}
