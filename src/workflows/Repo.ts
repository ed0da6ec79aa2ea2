/** SQL for workflows, their runs and steps. Every step transition is conditional on the status it leaves. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, IdRow, repository } from "../db/Repository.ts"
import { RunStatus, StepStatusSchema } from "./Model.ts"

const Json = Schema.Unknown

export const WorkflowRow = Schema.Struct({
  id: Schema.String,
  definition: Json,
  source: Schema.Literal("file", "api"),
  origin: Schema.NullOr(Schema.String),
  updated_at: Schema.DateFromSelf
})
export type WorkflowRow = typeof WorkflowRow.Type

export const RunRow = Schema.Struct({
  id: Schema.String,
  workflow_id: Schema.String,
  definition: Json,
  params: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }),
  status: RunStatus,
  triggered_by: Schema.String,
  session_id: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  finished_at: Schema.NullOr(Schema.DateFromSelf)
})
export type RunRow = typeof RunRow.Type

export const StepRow = Schema.Struct({
  run_id: Schema.String,
  ordinal: Schema.Number,
  step_id: Schema.String,
  status: StepStatusSchema,
  approved: Schema.Boolean,
  attempts: Schema.Number,
  task_id: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: Schema.NullOr(Schema.DateFromSelf)
})
export type StepRow = typeof StepRow.Type

/** A workflow with a schedule trigger and its next slot. */
const ScheduledRow = WorkflowRow.pipe(
  Schema.pick("id", "definition"),
  Schema.extend(Schema.Struct({ next_at: Schema.NullOr(Schema.DateFromSelf) }))
)
const StepTaskRow = StepRow.pipe(Schema.pick("task_id"))

const TaskState = Schema.Struct({ status: Schema.String, result: Schema.NullOr(Schema.String), error: Schema.NullOr(Schema.String) })

const runColumns = "id, workflow_id, definition, params, status, triggered_by, session_id, error, created_at, finished_at"
const stepColumns = "run_id, ordinal, step_id, status, approved, attempts, task_id, result, error, started_at, finished_at"

export class WorkflowsRepo extends Effect.Service<WorkflowsRepo>()("cairn/WorkflowsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const workflows = decodeRows(WorkflowRow)
    const runs = decodeRows(RunRow)
    const steps = decodeRows(StepRow)
    const tasks = decodeRows(TaskState)
    return repository("WorkflowsRepo", {
      list: workflows(sql`SELECT id, definition, source, origin, updated_at FROM workflows ORDER BY id`),
      find: (id: string) =>
        workflows(sql`SELECT id, definition, source, origin, updated_at FROM workflows WHERE id = ${id}`).pipe(Effect.map(firstRow)),
      /** A file's workflow; one changed through the API is left as it is. */
      syncFromFile: (id: string, definition: unknown, origin: string) =>
        sql`INSERT INTO workflows (id, definition, source, origin) VALUES (${id}, ${JSON.stringify(definition)}::jsonb, 'file', ${origin})
            ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, origin = excluded.origin, updated_at = now()
            WHERE workflows.source = 'file'`.pipe(Effect.asVoid),
      insert: (id: string, definition: unknown) =>
        Effect.map(
          sql`INSERT INTO workflows (id, definition, source) VALUES (${id}, ${
            JSON.stringify(definition)
          }::jsonb, 'api') ON CONFLICT (id) DO NOTHING RETURNING id`,
          (rows) => rows.length === 1
        ),
      update: (id: string, definition: unknown) =>
        Effect.map(
          sql`UPDATE workflows SET definition = ${
            JSON.stringify(definition)
          }::jsonb, source = 'api', updated_at = now() WHERE id = ${id} RETURNING id`,
          (rows) => rows.length === 1
        ),
      /** Workflows with a schedule trigger, with their next slot. */
      scheduled: decodeRows(ScheduledRow)(
        sql`SELECT id, definition, next_at FROM workflows WHERE definition->'triggers'->'schedule' IS NOT NULL`
      ),
      /** Moves a schedule's next slot from what was read (to the millisecond) to `to`; false when another process moved it. */
      moveSchedule: (id: string, from: Date | null, to: Date) =>
        Effect.map(
          sql`UPDATE workflows SET next_at = ${to}
               WHERE id = ${id} AND (CASE WHEN ${
            from === null
          } THEN next_at IS NULL ELSE date_trunc('milliseconds', next_at) = date_trunc('milliseconds', ${from}::timestamptz) END)
               RETURNING id`,
          (rows) => rows.length === 1
        ),
      remove: (id: string) => Effect.map(sql`DELETE FROM workflows WHERE id = ${id} RETURNING id`, (rows) => rows.length === 1),
      /** A run and its steps, all pending, in one statement each within the caller's transaction. */
      insertRun: (
        run: {
          readonly id: string
          readonly workflowId: string
          readonly definition: unknown
          readonly params: unknown
          readonly triggeredBy: string
          readonly sessionId: string
          readonly stepIds: ReadonlyArray<string>
        }
      ) =>
        Effect.zipRight(
          sql`INSERT INTO workflow_runs (id, workflow_id, definition, params, status, triggered_by, session_id)
              VALUES (${run.id}, ${run.workflowId}, ${JSON.stringify(run.definition)}::jsonb, ${
            JSON.stringify(run.params)
          }::jsonb, 'running', ${run.triggeredBy}, ${run.sessionId})`,
          sql`INSERT INTO workflow_steps ${
            sql.insert(run.stepIds.map((stepId, ordinal) => ({ run_id: run.id, ordinal, step_id: stepId, status: "pending" })))
          }`
        ).pipe(Effect.asVoid),
      run: (id: string) => runs(sql`SELECT ${sql.literal(runColumns)} FROM workflow_runs WHERE id = ${id}`).pipe(Effect.map(firstRow)),
      runs: (filter: { readonly workflowId?: string | undefined; readonly status?: string | undefined; readonly limit: number }) =>
        runs(sql`SELECT ${sql.literal(runColumns)} FROM workflow_runs
                 WHERE (${filter.workflowId ?? null}::text IS NULL OR workflow_id = ${filter.workflowId ?? null})
                   AND (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null})
                 ORDER BY created_at DESC, id LIMIT ${filter.limit}`),
      activeRunIds: Effect.map(
        decodeRows(IdRow)(sql`SELECT id FROM workflow_runs WHERE status = 'running' ORDER BY created_at LIMIT 200`),
        (rows) => rows.map((row) => row.id)
      ),
      steps: (runId: string) => steps(sql`SELECT ${sql.literal(stepColumns)} FROM workflow_steps WHERE run_id = ${runId} ORDER BY ordinal`),
      taskState: (taskId: string) => tasks(sql`SELECT status, result, error FROM tasks WHERE id = ${taskId}`).pipe(Effect.map(firstRow)),
      /** Moves a step from one status to another (with the fields given); false when it was not in `from`. */
      moveStep: (
        runId: string,
        ordinal: number,
        from: ReadonlyArray<string>,
        to: string,
        fields: {
          readonly taskId?: string | null
          readonly result?: string | null
          readonly error?: string | null
          readonly approved?: boolean
          readonly attempt?: boolean
          readonly resetAttempts?: boolean
        } = {}
      ) =>
        Effect.map(
          sql`UPDATE workflow_steps SET status = ${to},
                task_id = CASE WHEN ${fields.taskId !== undefined} THEN ${fields.taskId ?? null}::uuid ELSE task_id END,
                result = CASE WHEN ${fields.result !== undefined} THEN ${fields.result ?? null} ELSE result END,
                error = CASE WHEN ${fields.error !== undefined} THEN ${fields.error ?? null} ELSE error END,
                approved = CASE WHEN ${fields.approved !== undefined} THEN ${fields.approved ?? false} ELSE approved END,
                attempts = CASE WHEN ${fields.resetAttempts === true} THEN 0 WHEN ${
            fields.attempt === true
          } THEN attempts + 1 ELSE attempts END,
                started_at = CASE WHEN ${to} = 'running' THEN now() ELSE started_at END,
                finished_at = CASE WHEN ${to} IN ('complete', 'failed', 'skipped', 'cancelled') THEN now() ELSE NULL END
              WHERE run_id = ${runId} AND ordinal = ${ordinal} AND status IN ${sql.in(from)} RETURNING run_id`,
          (rows) => rows.length === 1
        ),
      /** Cancels every step not done; answers their tasks (a queued one is cancelled too). */
      cancelSteps: (runId: string) =>
        Effect.map(
          // The task id as the row is when cancelled (an attempt started meanwhile included).
          decodeRows(StepTaskRow)(sql`
            UPDATE workflow_steps SET status = 'cancelled', finished_at = now()
             WHERE run_id = ${runId} AND status IN ('pending', 'waiting_approval', 'running')
            RETURNING task_id`),
          (rows) => rows.flatMap((row) => (row.task_id ? [row.task_id] : []))
        ),
      /** Moves a run between statuses; false when it was not in `from`. */
      moveRun: (runId: string, from: ReadonlyArray<string>, to: string, error: string | null = null) =>
        Effect.map(
          sql`UPDATE workflow_runs SET status = ${to}, error = ${error}, updated_at = now(),
                finished_at = CASE WHEN ${to} IN ('complete', 'failed', 'cancelled') THEN now() ELSE NULL END
              WHERE id = ${runId} AND status IN ${sql.in(from)} RETURNING id`,
          (rows) => rows.length === 1
        )
    })
  })
}) {}
