/** SQL for tasks, including the claim that lets several workers share one queue. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Duration } from "effect"
import { randomUUID } from "node:crypto"
import { decodeRows, firstRow, IdRow, repository } from "../db/Repository.ts"
import { dispatchConfigColumn, resealPending } from "../db/Reseal.ts"
import { staleAfter } from "../runs/Runs.ts"
import { type NewTask, Task } from "./Model.ts"

const WorkerRow = Schema.Struct({ worker: Schema.String })
/** A task whose lease ran out: back in the queue (`pending`), or `failed` after its last attempt. */
const RecoveredRow = Schema.Struct({ id: Schema.String, status: Schema.Literal("pending", "failed") })

const runStaleSeconds = Duration.toSeconds(staleAfter)

export interface FinishedOutcome {
  readonly status: "complete" | "failed"
  readonly result: string | null
  readonly error: string | null
  readonly clientActions: ReadonlyArray<unknown>
  readonly runId: string
}

/** A finished task's result waits for delivery unless nobody is to be told. */
const deliveryAfterFinish = "CASE WHEN dispatch_type = 'none' THEN 'none' ELSE 'pending' END"

/**
 * A task as the services read it: the API's `Task` as the driver hands it over (its type side:
 * timestamps as `Date`, the dispatch config sealed rather than masked) and the columns the API does
 * not show. `SELECT *` also returns the worker's lease columns, dropped here.
 */
export const TaskRow = Schema.typeSchema(Schema.Struct(Task.fields)).pipe(
  Schema.extend(
    Schema.Struct({
      client_id: Schema.String,
      prompt_stored: Schema.Boolean,
      /** The message's attachments, stored with it when its turn comes. */
      attachments: Schema.optionalWith(Schema.Array(Schema.Unknown), { default: () => [] }),
      model_override: Schema.NullOr(Schema.String)
    })
  )
)
export type TaskRow = typeof TaskRow.Type

export class TasksRepo extends Effect.Service<TasksRepo>()("cairn/TasksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const taskRows = decodeRows(TaskRow)
    return repository("TasksRepo", {
      /** Seals, once (db/Reseal.ts), the URL credentials an older release stored in the clear. */
      resealDispatchConfigs: (seal: (config: Record<string, unknown>) => Record<string, unknown>) =>
        resealPending("tasks.dispatch_config", dispatchConfigColumn(sql, "tasks", "id", seal)),
      insert: (task: NewTask) =>
        Effect.map(
          taskRows(sql`INSERT INTO tasks (id, source, bot_id, session_id, channel_id, client_id, prompt, prompt_stored, model_override,
                                          dispatch_type, dispatch_config, execution_config, attachments, inbound_id)
            VALUES (${randomUUID()}, ${task.source}, ${task.botId}, ${task.sessionId}, ${task.channelId}, ${task.clientId},
                    ${task.prompt}, ${task.promptStored ?? false}, ${task.modelOverride ?? null}, ${task.dispatchType ?? "none"},
                    ${JSON.stringify(task.dispatchConfig ?? {})}::jsonb, ${JSON.stringify(task.executionConfig ?? {})}::jsonb,
                    ${JSON.stringify(task.attachments ?? [])}::jsonb, ${task.inboundId ?? null})
            RETURNING *`),
          (rows) => rows[0]!
        ),
      /** A run that was not queued (it started at once) recorded as a finished task, so its result is delivered like one. */
      insertFinished: (task: NewTask, outcome: FinishedOutcome) =>
        Effect.map(
          taskRows(sql`INSERT INTO tasks (id, source, bot_id, session_id, channel_id, client_id, prompt, prompt_stored, model_override,
                                          dispatch_type, dispatch_config, execution_config, status, result, error, client_actions,
                                          run_id, attempts, started_at, completed_at, delivery_status)
            VALUES (${randomUUID()}, ${task.source}, ${task.botId}, ${task.sessionId}, ${task.channelId}, ${task.clientId},
                    ${task.prompt}, true, ${task.modelOverride ?? null}, ${task.dispatchType ?? "none"},
                    ${JSON.stringify(task.dispatchConfig ?? {})}::jsonb, ${JSON.stringify(task.executionConfig ?? {})}::jsonb,
                    ${outcome.status}, ${outcome.result}, ${outcome.error}, ${JSON.stringify(outcome.clientActions)}::jsonb,
                    ${outcome.runId}, 1, now(), now(), ${task.dispatchType && task.dispatchType !== "none" ? "pending" : "none"})
            RETURNING *`),
          (rows) => rows[0]!
        ),
      find: (id: string) => sql`SELECT * FROM tasks WHERE id = ${id}`.pipe(taskRows, Effect.map(firstRow)),
      /**
       * Claims the oldest pending task whose session has nothing running: one task per session at a
       * time, in order, and each task by one worker only.
       */
      /** Whether any task is pending (claimable or waiting for its session). */
      hasPending: Effect.map(sql`SELECT 1 FROM tasks WHERE status = 'pending' LIMIT 1`, (rows) => rows.length > 0),
      claim: (worker: string, leaseSeconds: number) =>
        Effect.map(
          taskRows(sql`UPDATE tasks SET status = 'running', started_at = now(), attempts = attempts + 1, worker = ${worker},
                         lease_until = now() + make_interval(secs => ${leaseSeconds})
            WHERE id = (
              SELECT t.id FROM tasks t
              WHERE t.status = 'pending'
                AND NOT EXISTS (SELECT 1 FROM tasks o WHERE o.session_id = t.session_id AND o.status = 'running')
                AND NOT EXISTS (SELECT 1 FROM tasks o WHERE o.session_id = t.session_id AND o.status = 'pending' AND o.created_at < t.created_at)
                AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = t.session_id AND r.status = 'running'
                                  AND r.heartbeat_at >= now() - make_interval(secs => ${runStaleSeconds}))
              ORDER BY t.created_at
              LIMIT 1
              FOR UPDATE SKIP LOCKED
            ) AND status = 'pending'
            RETURNING *`),
          firstRow
        ),
      /**
       * Gives a claimed task back (its session turned out busy, its run was stopped): only while
       * `worker` holds it, so a worker whose lease was taken over never requeues a task another
       * worker runs or finished.
       */
      release: (id: string, worker: string) =>
        sql`UPDATE tasks SET status = 'pending', attempts = attempts - 1, worker = NULL, lease_until = NULL
            WHERE id = ${id} AND status = 'running' AND worker = ${worker}`.pipe(Effect.asVoid),
      attachRun: (id: string, runId: string) => sql`UPDATE tasks SET run_id = ${runId} WHERE id = ${id}`.pipe(Effect.asVoid),
      /** Records the result; false when the task was no longer this worker's (its lease was taken over). */
      complete: (id: string, worker: string, result: string, clientActions: ReadonlyArray<unknown>) =>
        Effect.map(
          sql`UPDATE tasks SET status = 'complete', result = ${result},
              client_actions = ${JSON.stringify(clientActions)}::jsonb, completed_at = now(), lease_until = NULL,
              delivery_status = ${sql.literal(deliveryAfterFinish)}
            WHERE id = ${id} AND status = 'running' AND worker = ${worker} RETURNING id`,
          (rows) => rows.length === 1
        ),
      fail: (id: string, error: string, worker?: string) =>
        Effect.map(
          sql`UPDATE tasks SET status = 'failed', error = ${error}, completed_at = now(), lease_until = NULL,
              delivery_status = ${sql.literal(deliveryAfterFinish)}
            WHERE id = ${id} AND status IN ('pending', 'running') ${worker === undefined ? sql`` : sql`AND worker = ${worker}`}
            RETURNING id`,
          (rows) => rows.length === 1
        ),
      markCancelled: (id: string) =>
        sql`UPDATE tasks SET status = 'cancelled', completed_at = now(), lease_until = NULL WHERE id = ${id}`.pipe(Effect.asVoid),
      cancelPending: (sessionId: string) =>
        Effect.map(
          sql`UPDATE tasks SET status = 'cancelled', completed_at = now()
                              WHERE session_id = ${sessionId} AND status = 'pending' RETURNING id`,
          (rows) => rows.length
        ),
      /** Cancels the pending tasks queued by one source (an integration), of one channel when given. */
      cancelPendingBySource: (source: string, channelId: string | undefined) =>
        Effect.map(
          channelId === undefined
            ? sql`UPDATE tasks SET status = 'cancelled', completed_at = now() WHERE source = ${source} AND status = 'pending' RETURNING id`
            : sql`UPDATE tasks SET status = 'cancelled', completed_at = now()
                  WHERE source = ${source} AND channel_id = ${channelId} AND status = 'pending' RETURNING id`,
          (rows) => rows.length
        ),
      /** Pending to cancelled; the row as it is now (undefined when there is no such task). */
      cancel: (id: string) =>
        Effect.gen(function*() {
          const cancelled = yield* taskRows(sql`UPDATE tasks SET status = 'cancelled', completed_at = now()
                                                WHERE id = ${id} AND status = 'pending' RETURNING *`)
          if (cancelled[0]) return { cancelled: true, row: cancelled[0] } as const
          const rows = yield* taskRows(sql`SELECT * FROM tasks WHERE id = ${id}`)
          return { cancelled: false, row: rows[0] } as const
        }),
      list: (filter: { readonly status?: string; readonly sessionId?: string; readonly botId?: string; readonly limit: number }) =>
        sql`SELECT * FROM tasks WHERE ${
          sql.and([
            filter.status === undefined ? sql`true` : sql`status = ${filter.status}`,
            filter.sessionId === undefined ? sql`true` : sql`session_id = ${filter.sessionId}`,
            filter.botId === undefined ? sql`true` : sql`bot_id = ${filter.botId}`
          ])
        } ORDER BY created_at DESC LIMIT ${filter.limit}`.pipe(taskRows),
      /** Takes the delivery of a finished task for `seconds`; the row when taken. */
      claimDelivery: (id: string, seconds: number) =>
        Effect.map(
          taskRows(sql`UPDATE tasks SET delivery_lease_until = now() + make_interval(secs => ${seconds})
            WHERE id = ${id} AND delivery_status = 'pending' AND (delivery_lease_until IS NULL OR delivery_lease_until < now())
            RETURNING *`),
          firstRow
        ),
      /** Gives a delivery's lease back (its process stops): the next process's sweep takes it at once. */
      releaseDelivery: (id: string) =>
        sql`UPDATE tasks SET delivery_lease_until = NULL WHERE id = ${id} AND delivery_status = 'pending'`.pipe(Effect.asVoid),
      extendDelivery: (id: string, seconds: number) =>
        sql`UPDATE tasks SET delivery_lease_until = now() + make_interval(secs => ${seconds}) WHERE id = ${id}`.pipe(Effect.asVoid),
      recordDeliveryAttempt: (id: string, outcome: "delivered" | "failed" | "uncertain" | "pending", error: string | null) =>
        sql`UPDATE tasks SET delivery_status = ${outcome}, delivery_error = ${error}, delivery_attempts = delivery_attempts + 1,
              delivery_lease_until = CASE WHEN ${outcome}::text = 'pending' THEN delivery_lease_until ELSE NULL END
            WHERE id = ${id}`.pipe(Effect.asVoid),
      /** Deliveries left pending by a process that died (their lease ran out). */
      orphanedDeliveries: (limit: number) =>
        Effect.map(
          decodeRows(IdRow)(sql`SELECT id FROM tasks WHERE delivery_status = 'pending'
            AND (delivery_lease_until IS NULL OR delivery_lease_until < now())
            AND completed_at < now() - interval '5 seconds' ORDER BY completed_at LIMIT ${limit}`),
          (rows) => rows.map((row) => row.id)
        ),
      /**
       * Renews the leases of the tasks `worker` still runs (`held`), not of every task it claimed:
       * one whose fiber ended without recording its end (the database gone at that moment) lapses
       * and is taken again, rather than staying `running` for as long as the process lives.
       */
      renewLeases: (worker: string, leaseSeconds: number, held: ReadonlyArray<string>) =>
        held.length === 0
          ? Effect.void
          : sql`UPDATE tasks SET lease_until = now() + make_interval(secs => ${leaseSeconds})
            WHERE worker = ${worker} AND status = 'running' AND id IN ${sql.in(held)}`.pipe(Effect.asVoid),
      /** Marks the task's message as stored (in the same transaction as the message). */
      markPromptStored: (id: string) => Effect.asVoid(sql`UPDATE tasks SET prompt_stored = true WHERE id = ${id}`),
      /** The workers holding running tasks (one per server process start). */
      runningWorkers: Effect.map(
        decodeRows(WorkerRow)(sql`SELECT DISTINCT worker FROM tasks WHERE status = 'running' AND worker IS NOT NULL`),
        (rows) => rows.map((row) => row.worker)
      ),
      /** Ends the leases of workers known to be gone, so the next upkeep requeues their tasks at once. */
      expireLeases: (workers: ReadonlyArray<string>) =>
        Effect.asVoid(
          sql`UPDATE tasks SET lease_until = now() - interval '1 second' WHERE status = 'running' AND worker IN ${sql.in(workers)}`
        ),
      /**
       * Tasks whose lease ran out lost their worker: back to the queue, or failed (and their result's
       * delivery due) once they have used `maxAttempts`. Answers each with where it went.
       */
      recoverExpired: (maxAttempts: number) =>
        decodeRows(RecoveredRow)(sql`UPDATE tasks SET
            status = CASE WHEN attempts >= ${maxAttempts} THEN 'failed' ELSE 'pending' END,
            error = CASE WHEN attempts >= ${maxAttempts}
                         THEN 'The worker running this task stopped (lease expired) ' || attempts || ' times; giving up'
                         ELSE error END,
            completed_at = CASE WHEN attempts >= ${maxAttempts} THEN now() ELSE NULL END,
            delivery_status = CASE WHEN attempts >= ${maxAttempts} AND dispatch_type <> 'none' THEN 'pending' ELSE delivery_status END,
            worker = NULL, lease_until = NULL
          WHERE status = 'running' AND lease_until < now()
          RETURNING id, status`)
    })
  })
}) {}
