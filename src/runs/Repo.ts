/**
 * SQL for runs and their event log. The lock is a partial unique index on `runs` (one running row
 * per session); events are rows of `run_events` keyed by run and sequence number. Rows read back are
 * decoded with schemas; a database failure is a defect here.
 */
import { SqlClient, SqlSchema, Statement } from "@effect/sql"
import { Duration, Effect, Option, Schema } from "effect"
import type { StatementNotice } from "../db/Bus.ts"
import { busConnectionPrefix } from "../db/BusListener.ts"
import { type CarriedWrites, type GatedWrites, relaxedJoin, withParts } from "../db/Commit.ts"
import { DatabaseInfo } from "../db/Database.ts"
import { DirectStatements } from "../db/Direct.ts"
import { decodeRows, IdRow, repository } from "../db/Repository.ts"

/** One event as the log stores it (the event as JSON, decoded by the event schema when read). */
export interface StoredEventRow {
  readonly seq: number
  readonly event: unknown
}

export type RunStatus = "running" | "complete" | "failed" | "cancelled"

const HeartbeatRow = Schema.Struct({ id: Schema.String, cancel_requested: Schema.Boolean })
const EventRow = Schema.Struct({ seq: Schema.Number, event: Schema.Unknown })
const StatusRow = Schema.Struct({ status: Schema.String, stale: Schema.Boolean })
const OwnerRow = Schema.Struct({ owner: Schema.String })
const ClosedRow = Schema.Struct({ run_id: Schema.String })
const LockedRow = Schema.Struct({ id: Schema.String, report: Schema.optional(Schema.Unknown) })
const EndedRow = Schema.Struct({ ended: Schema.Boolean, report: Schema.optional(Schema.Unknown) })
const SettledRow = Schema.Struct({
  status: Schema.Literal("complete", "cancelled"),
  text: Schema.NullOr(Schema.String),
  client_actions: Schema.NullOr(Schema.Unknown)
})
/** The `WITH` part of a run's end that ends it: what the writes carried into the end are gated on. */
const endGate = "ended"
const joinColumns = Statement.join(", ", false)

/** How often a process renews its runs' heartbeats (runs/Liveness.ts). */
export const heartbeatEverySeconds = 1
/** Two heartbeats missed, with a margin: with its process's connection gone too, the holder is dead. */
export const missedHeartbeatsSeconds = 3

/**
 * A run's holder is gone: its heartbeat is `staleSeconds` old, or (PostgreSQL) it missed two
 * heartbeats and its process has no listening connection any more: a kill or a crash, whose
 * socket PostgreSQL saw close. A hung process or a partitioned host keeps its connection until
 * TCP gives up, and is taken over by its heartbeat's age only.
 */
const goneAfter = (sql: SqlClient.SqlClient, backend: "pglite" | "postgres") => (staleSeconds: number) =>
  backend === "postgres"
    ? sql`(heartbeat_at < now() - make_interval(secs => ${staleSeconds})
          OR (heartbeat_at < now() - make_interval(secs => ${missedHeartbeatsSeconds})
              AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                              WHERE a.application_name = ${busConnectionPrefix} || regexp_replace(runs.owner, ':[^:]*$', ''))))`
    : sql`heartbeat_at < now() - make_interval(secs => ${staleSeconds})`

/**
 * Ends at once the leases of tasks whose worker is gone, so a dead host's tasks are taken again
 * within seconds, not when their lease runs out: their run's holder is gone (`runGone`: a killed
 * process's connection closed and its heartbeats missed), or, with no run of theirs running (its
 * end written, not yet recorded on the task; or not started), their worker's process has no
 * listening connection any more, for longer than a worker takes to record.
 */
const expireGoneWorkersTasks = (sql: SqlClient.SqlClient, runGone: Statement.Fragment) =>
  sql`UPDATE tasks t SET lease_until = now() - interval '1 second'
    WHERE t.status = 'running' AND t.lease_until >= now()
      AND (t.run_id IN (SELECT id FROM runs WHERE status = 'running' AND ${runGone})
        OR (t.started_at < now() - make_interval(secs => ${missedHeartbeatsSeconds})
            AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = t.run_id AND r.status = 'running')
            AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = t.run_id
                              AND r.finished_at >= now() - make_interval(secs => ${missedHeartbeatsSeconds}))
            AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                            WHERE a.application_name = ${busConnectionPrefix} || regexp_replace(t.worker, ':[^:]*$', ''))))
    RETURNING t.id`

/**
 * Inserts a run's events (one already written, a retried batch, is kept as it is) where `gate`
 * holds. The batch as one JSON parameter, so the statement has one text whatever the batch's size
 * and stays prepared (db/Database.ts, db/PgliteClient.ts). Relaxed, its commit does not wait for
 * the disk (db/Commit.ts): a running run's events, written while it runs.
 */
const eventInsertOf =
  (sql: SqlClient.SqlClient) => (runId: string, events: ReadonlyArray<StoredEventRow>, gate: Statement.Fragment, relaxed = false) =>
    sql`INSERT INTO run_events (run_id, seq, event)
        SELECT ${runId}::uuid, (item->>'seq')::int, item->'event'
        FROM jsonb_array_elements(${JSON.stringify(events)}::jsonb) AS item${sql.literal(relaxedJoin(relaxed))}
        WHERE ${gate}
        ON CONFLICT DO NOTHING`

/**
 * A running run's events, written behind it (relaxed): only while it runs and is `owner`'s, so a
 * run another process closed (its heartbeat stopped) adds nothing after the end that closed it.
 */
const runningEventInsert = (sql: SqlClient.SqlClient, runId: string, owner: string, batch: ReadonlyArray<StoredEventRow>) =>
  eventInsertOf(sql)(runId, batch, sql`EXISTS (SELECT FROM runs WHERE id = ${runId} AND status = 'running' AND owner = ${owner})`, true)

/** Which run ends, whose (its lock's holder), and how. */
interface RunEnd {
  readonly runId: string
  readonly owner: string
  readonly status: RunStatus
}

/**
 * A run's end as one statement, fenced: its `ended` part ends the run only while it is running and
 * `owner`'s, and its last events and `writes` (gated on `ended`) are written only then, so a run
 * another process closed (its holder looked dead, its task's lease lapsed) writes nothing of its
 * end. Data-modifying WITH parts always run, so whether it ended the run, the notice and the
 * report are the statement's own result.
 */
const endStatement = (
  sql: SqlClient.SqlClient,
  { owner, runId, status }: RunEnd,
  rest: ReadonlyArray<StoredEventRow>,
  notice: StatementNotice | undefined,
  writes: CarriedWrites | undefined
) => {
  const ended = sql`UPDATE runs SET status = ${status}, finished_at = now()
    WHERE id = ${runId} AND status = 'running' AND owner = ${owner} RETURNING id`
  const taken = sql`EXISTS (SELECT FROM ${sql(endGate)})`
  const parts = [
    [endGate, ended] as const,
    ...(writes?.parts ?? []),
    ...(rest.length > 0 ? [["events", eventInsertOf(sql)(runId, rest, taken)] as const] : [])
  ]
  const columns = [
    sql`${taken} AS ended`,
    ...(notice ? [sql`pg_notify(${notice.channel}, ${notice.payload})`] : []),
    ...(writes?.report ? [sql`${writes.report.value} AS report`] : [])
  ]
  return sql`WITH ${withParts(sql, parts)} SELECT ${joinColumns(columns)}`
}

/**
 * A run's recorded end when it answered or was cancelled: its status and what its last `response`
 * said. A task whose worker died between its run's end and recording it (tasks/Worker.ts) takes its
 * answer from here rather than answering again.
 */
const settledOf = (sql: SqlClient.SqlClient) =>
  SqlSchema.findOne({
    Request: Schema.String,
    Result: SettledRow,
    execute: (runId) =>
      sql`SELECT r.status, e.event->>'text' AS text, e.event->'client_actions' AS client_actions FROM runs r
          LEFT JOIN LATERAL (SELECT event FROM run_events WHERE run_id = r.id AND event->>'type' = 'response'
                             ORDER BY seq DESC LIMIT 1) e ON true
          WHERE r.id = ${runId} AND r.status IN ('complete', 'cancelled')`
  })

export class RunsRepo extends Effect.Service<RunsRepo>()("cairn/RunsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { backend } = yield* DatabaseInfo
    const gone = goneAfter(sql, backend)
    // A turn's statements: the run's lock and its end.
    const { rows } = yield* DirectStatements

    const heartbeat = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: HeartbeatRow,
      execute: (ids) =>
        sql`UPDATE runs SET heartbeat_at = now() WHERE id IN ${sql.in(ids)} AND status = 'running' RETURNING id, cancel_requested`
    })
    // With gated writes (the message that starts the run), they commit only when the lock was
    // taken: the `locked` part answers the run's row then, and nothing when another run holds it.
    const lockStatement = (id: string, sessionId: string, owner: string, taskId: string | null, gated: CarriedWrites | undefined) => {
      const locked =
        sql`INSERT INTO runs (id, session_id, status, owner, task_id) VALUES (${id}, ${sessionId}, 'running', ${owner}, ${taskId})
            ON CONFLICT (session_id) WHERE status = 'running' DO NOTHING RETURNING id`
      if (!gated) return locked
      const report = gated.report ? sql`, ${gated.report.value} AS report` : sql``
      return sql`WITH locked AS (${locked}), ${withParts(sql, gated.parts)} SELECT id${report} FROM locked`
    }
    const failStale = SqlSchema.findAll({
      Request: Schema.Struct({ sessionId: Schema.String, staleSeconds: Schema.Number }),
      Result: IdRow,
      execute: ({ sessionId, staleSeconds }) =>
        sql`UPDATE runs SET status = 'failed', finished_at = now()
            WHERE session_id = ${sessionId} AND status = 'running' AND ${gone(staleSeconds)} RETURNING id`
    })
    const events = SqlSchema.findAll({
      Request: Schema.String,
      Result: EventRow,
      execute: (runId) => sql`SELECT seq, event FROM run_events WHERE run_id = ${runId} ORDER BY seq`
    })
    const status = SqlSchema.findOne({
      Request: Schema.Struct({ runId: Schema.String, staleSeconds: Schema.Number }),
      Result: StatusRow,
      execute: ({ runId, staleSeconds }) => sql`SELECT status, ${gone(staleSeconds)} AS stale FROM runs WHERE id = ${runId}`
    })
    const latest = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (sessionId) => sql`SELECT id FROM runs WHERE session_id = ${sessionId} ORDER BY created_at DESC LIMIT 1`
    })
    const exists = SqlSchema.findOne({
      Request: Schema.Struct({ runId: Schema.String, sessionId: Schema.String }),
      Result: IdRow,
      execute: ({ runId, sessionId }) => sql`SELECT id FROM runs WHERE id = ${runId} AND session_id = ${sessionId}`
    })
    const settled = settledOf(sql)
    const requestCancel = SqlSchema.findAll({
      Request: Schema.String,
      Result: IdRow,
      execute: (sessionId) =>
        sql`UPDATE runs SET cancel_requested = true WHERE session_id = ${sessionId} AND status = 'running' RETURNING id`
    })

    /**
     * Ends running runs (those of the owners given, or those whose heartbeat is older than
     * `staleSeconds`) as failed, with `error` then `response` after the last event each logged,
     * in one statement: a rejoin ends as the run would have. Answers how many it ended.
     */
    const closeRuns = (which: { readonly owners: ReadonlyArray<string> } | { readonly staleSeconds: number }, message: string) => {
      const condition = "owners" in which
        ? sql`owner IN ${sql.in(which.owners)}`
        : gone(which.staleSeconds)
      const error = JSON.stringify({ type: "error", message })
      return Effect.map(
        decodeRows(ClosedRow)(sql`WITH closed AS (
            UPDATE runs SET status = 'failed', finished_at = now() WHERE status = 'running' AND ${condition} RETURNING id, session_id
          ), last AS (
            SELECT closed.id, closed.session_id, coalesce((SELECT max(seq) FROM run_events WHERE run_id = closed.id), 0) AS seq FROM closed
          )
          INSERT INTO run_events (run_id, seq, event)
          SELECT id, seq + 1, ${error}::jsonb FROM last
          UNION ALL
          SELECT id, seq + 2, jsonb_build_object('type', 'response', 'text', '', 'tools_used', '[]'::jsonb, 'client_actions', '[]'::jsonb, 'session_id', session_id::text) FROM last
          ON CONFLICT DO NOTHING
          RETURNING run_id`),
        (rows) => new Set(rows.map((row) => row.run_id)).size
      )
    }

    return repository("RunsRepo", {
      /** The holders of running runs' locks (one per server process start). */
      runningOwners: Effect.map(
        decodeRows(OwnerRow)(sql`SELECT DISTINCT owner FROM runs WHERE status = 'running'`),
        (rows) => rows.map((row) => row.owner)
      ),
      closeRuns,
      /** Appends a running run's events (`runningEventInsert`). */
      appendEvents: (runId: string, owner: string, batch: ReadonlyArray<StoredEventRow>) =>
        Effect.asVoid(rows(runningEventInsert(sql, runId, owner, batch))),
      /** Keeps these runs' locks alive; answers the ones still running here, with their cancel flag. */
      heartbeat: (ids: ReadonlyArray<string>) => heartbeat(ids),
      /**
       * Takes the session's lock for a new run, with the writes `gated` gives; false when a run
       * holds it. Their report, when they ask for one, is told once the lock is taken.
       */
      lock: (
        { id, sessionId, owner, taskId }: {
          readonly id: string
          readonly sessionId: string
          readonly owner: string
          readonly taskId: string | null
        },
        gated?: GatedWrites
      ) => {
        const writes = gated?.("locked")
        return Effect.map(decodeRows(LockedRow)(rows(lockStatement(id, sessionId, owner, taskId, writes))), (locked) => {
          if (locked.length === 0) return false
          writes?.report?.take(locked[0]!.report ?? null)
          return true
        })
      },
      /** Ends the session's running run if its process stopped heartbeating that long ago; whether it did. */
      failStale: (sessionId: string, staleAfter: Duration.Duration) =>
        Effect.map(failStale({ sessionId, staleSeconds: Duration.toSeconds(staleAfter) }), (rows) => rows.length > 0),
      /** Gives up a lock whose run never started. */
      release: (runId: string) =>
        Effect.asVoid(sql`UPDATE runs SET status = 'failed', finished_at = now() WHERE id = ${runId} AND status = 'running'`),
      /**
       * The run's end, its last events and the writes its turn carried (its answer or partial
       * answer) in one statement, fenced (`endStatement`), with the notice of its end when the bus
       * sends notices from statements (db/Bus.ts, `publishWith`). Whether it ended the run.
       */
      end: (run: RunEnd, rest: ReadonlyArray<StoredEventRow>, notice: StatementNotice | undefined, carried?: GatedWrites) => {
        const writes = carried?.(endGate)
        return Effect.map(decodeRows(EndedRow)(rows(endStatement(sql, run, rest, notice, writes))), (found) => {
          writes?.report?.take(found[0]?.report ?? null)
          return found[0]?.ended === true
        })
      },
      /** A run's end when it answered or was cancelled (`settledOf`); None for one that failed or runs. */
      settled: (runId: string) => settled(runId),
      events: (runId: string) => events(runId),
      /** The run's status and whether its process stopped heartbeating; None for an unknown run. */
      status: (runId: string, staleAfter: Duration.Duration) => status({ runId, staleSeconds: Duration.toSeconds(staleAfter) }),
      latest: (sessionId: string) => Effect.map(latest(sessionId), Option.map((row) => row.id)),
      exists: (runId: string, sessionId: string) => Effect.map(exists({ runId, sessionId }), Option.isSome),
      /** Flags the session's running run for cancellation (its process stops it); whether there was one. */
      requestCancel: (sessionId: string) => Effect.map(requestCancel(sessionId), (rows) => rows.length > 0),
      /**
       * Ends the runs of tasks whose lease ran out (their worker died with the run): their sessions'
       * locks are free now rather than when the heartbeat goes stale.
       */
      /** The dead holders' tasks, their leases ended now (`expireGoneWorkersTasks`); answers their ids. */
      expireTasksOfGoneRuns: (staleSeconds: number) =>
        Effect.map(decodeRows(IdRow)(expireGoneWorkersTasks(sql, gone(staleSeconds))), (rows) => rows.map((row) => row.id)),
      releaseDeadTaskRuns: Effect.asVoid(sql`UPDATE runs SET status = 'failed', finished_at = now()
        WHERE status = 'running' AND task_id IN (SELECT id FROM tasks WHERE status = 'running' AND lease_until < now())`)
    })
  })
}) {}
