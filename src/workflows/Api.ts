/** `/api/v1/admin/workflows`: definitions, runs, and a run's steps (approve, skip, retry). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath, pathParams } from "../contract/Params.ts"
import { WorkflowConflict, WorkflowNotFound } from "./Errors.ts"
import { RunQuery, RunRequest, Workflow, WorkflowRun } from "./Model.ts"

const workflowPath = pathParams({ id: Schema.String })
const runPath = idPath("Workflow run")
const stepPath = idPath("Workflow run", { step: Schema.String })

export class WorkflowsApi extends HttpApiGroup.make("workflows")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/workflows").addSuccess(Schema.Array(Workflow)).annotate(RequiredScope, "workflows:read")
      .annotate(OpenApi.Description, "Every workflow, from files and from the API")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/admin/workflows/:id").setPath(workflowPath).addSuccess(Workflow).annotate(
      RequiredScope,
      "workflows:read"
    ).annotate(OpenApi.Description, "One workflow, its definition with defaults filled in")
  )
  .add(
    HttpApiEndpoint.get("export", "/api/v1/admin/workflows/:id/export")
      .setPath(workflowPath)
      .addSuccess(HttpApiSchema.Text({ contentType: "application/yaml" }))
      .annotate(RequiredScope, "workflows:read")
      .annotate(OpenApi.Description, "The workflow as YAML, as a file in workflows/ holds it")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/admin/workflows")
      .setPayload(Schema.Unknown)
      .addSuccess(Workflow, { status: 201 })
      .annotate(RequiredScope, "workflows:write")
      .annotate(
        OpenApi.Description,
        "Create a workflow from its definition (JSON; see docs/api.md, \"Workflows\"); 422 with every problem, 409 when the id exists"
      )
  )
  .add(
    HttpApiEndpoint.put("update", "/api/v1/admin/workflows/:id")
      .setPath(workflowPath)
      .setPayload(Schema.Unknown)
      .addSuccess(Workflow)
      .annotate(RequiredScope, "workflows:write")
      .annotate(OpenApi.Description, "Replace a workflow's definition (runs in progress keep theirs)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/admin/workflows/:id")
      .setPath(workflowPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "workflows:write")
      .annotate(OpenApi.Description, "Delete a workflow (its runs stay)")
  )
  .add(
    HttpApiEndpoint.post("run", "/api/v1/admin/workflows/:id/run")
      .setPath(workflowPath)
      .setPayload(RunRequest)
      .addSuccess(WorkflowRun, { status: 202 })
      .annotate(RequiredScope, "workflows:write")
      .annotate(
        OpenApi.Description,
        "Start a run with {params}: each checked against its declared type, defaults filled in (422 at params.<name> otherwise)"
      )
  )
  .add(
    HttpApiEndpoint.get("runs", "/api/v1/admin/workflow-runs")
      .setUrlParams(RunQuery)
      .addSuccess(Schema.Array(WorkflowRun))
      .annotate(RequiredScope, "workflows:read")
      .annotate(OpenApi.Description, "Runs, newest first, with their steps; filter by workflow_id, status; limit 1-500 (default 50)")
  )
  .add(
    HttpApiEndpoint.get("getRun", "/api/v1/admin/workflow-runs/:id")
      .setPath(runPath)
      .addSuccess(WorkflowRun)
      .annotate(RequiredScope, "workflows:read")
      .annotate(OpenApi.Description, "One run: its status and each step's status, attempts, result, error and timing")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/api/v1/admin/workflow-runs/:id/cancel")
      .setPath(runPath)
      .addSuccess(WorkflowRun)
      .annotate(RequiredScope, "workflows:write")
      .annotate(OpenApi.Description, "Cancel a running or waiting run")
  )
  .add(
    HttpApiEndpoint.post("approve", "/api/v1/admin/workflow-runs/:id/steps/:step/approve")
      .setPath(stepPath)
      .addSuccess(WorkflowRun)
      .annotate(RequiredScope, "workflows:write")
      .annotate(OpenApi.Description, "Approve a step waiting at its approval gate")
  )
  .add(
    HttpApiEndpoint.post("skip", "/api/v1/admin/workflow-runs/:id/steps/:step/skip")
      .setPath(stepPath)
      .addSuccess(WorkflowRun)
      .annotate(RequiredScope, "workflows:write")
      .annotate(OpenApi.Description, "Skip a pending, waiting or failed step; the run goes on")
  )
  .add(
    HttpApiEndpoint.post("retry", "/api/v1/admin/workflow-runs/:id/steps/:step/retry")
      .setPath(stepPath)
      .addSuccess(WorkflowRun)
      .annotate(RequiredScope, "workflows:write")
      .annotate(OpenApi.Description, "Run a failed step again (its attempts counted afresh); the run resumes")
  )
  .addError(detailBody(WorkflowNotFound))
  .addError(detailBody(WorkflowConflict))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Workflows")
{}
