/** Workflows and their runs as the API shows them. */
import { Schema } from "effect"
import { limitParam, queryParams } from "../contract/Params.ts"

export const RunStatus = Schema.Literal("running", "waiting", "complete", "failed", "cancelled")
export const StepStatusSchema = Schema.Literal("pending", "waiting_approval", "running", "complete", "failed", "skipped", "cancelled")

export class Workflow extends Schema.Class<Workflow>("Workflow")({
  id: Schema.String,
  /** The definition, defaults filled in (see docs/api.md, "Workflows"). */
  definition: Schema.Unknown,
  /** file (workflows/, WORKFLOWS_DIR) or api. */
  source: Schema.Literal("file", "api"),
  updated_at: Schema.String
}) {}

export class WorkflowStep extends Schema.Class<WorkflowStep>("WorkflowStep")({
  id: Schema.String,
  status: StepStatusSchema,
  attempts: Schema.Number,
  task_id: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String)
}) {}

export class WorkflowRun extends Schema.Class<WorkflowRun>("WorkflowRun")({
  id: Schema.String,
  workflow_id: Schema.String,
  status: RunStatus,
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  triggered_by: Schema.String,
  session_id: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  steps: Schema.Array(WorkflowStep),
  created_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String)
}) {}

export const RunRequest = Schema.Struct({
  params: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { default: () => ({}) })
}).annotations({ parseOptions: { errors: "all", onExcessProperty: "error" } })

export const RunQuery = queryParams({
  workflow_id: Schema.optional(Schema.String),
  status: Schema.optional(RunStatus),
  limit: limitParam()
})
