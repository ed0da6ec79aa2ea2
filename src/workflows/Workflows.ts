/**
 * Workflows: definitions (CRUD, files synced at start, YAML export) and runs (params checked against
 * their declared types), started, viewed and moved by hand (approve, skip, retry, cancel). How a run
 * moves on, its state machine, is `Advance.ts`; the tool a workflow gives bots is `ToolTrigger.ts`.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, ParseResult, Schema } from "effect"
import { randomUUID } from "node:crypto"
import YAML from "yaml"
import { layer as ToolRegistryLive, ToolRegistry } from "../agent/Tools.ts"
import { Bots } from "../bots/Bots.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { Bus } from "../db/Bus.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Tasks } from "../tasks/Tasks.ts"
import { traced } from "../telemetry/Spans.ts"
import { advancing } from "./Advance.ts"
import { resolveParams, toolNameOf, WorkflowDefinition } from "./Definition.ts"
import { WorkflowConflict, WorkflowNotFound } from "./Errors.ts"
import { Workflow, WorkflowRun, WorkflowStep } from "./Model.ts"
import { type RunRow, type StepRow, type WorkflowRow, WorkflowsRepo } from "./Repo.ts"
import { toolTriggers } from "./ToolTrigger.ts"

const decodeDefinition = Schema.decodeUnknownSync(WorkflowDefinition)
const encodeDefinition = Schema.encodeSync(WorkflowDefinition)

const toWorkflow = (row: WorkflowRow) =>
  new Workflow({ id: row.id, definition: row.definition, source: row.source, updated_at: row.updated_at.toISOString() })

const toRun = (run: RunRow, steps: ReadonlyArray<StepRow>) =>
  new WorkflowRun({
    id: run.id,
    workflow_id: run.workflow_id,
    status: run.status,
    params: run.params,
    triggered_by: run.triggered_by,
    session_id: run.session_id,
    error: run.error,
    steps: steps.map(
      (step) =>
        new WorkflowStep({
          id: step.step_id,
          status: step.status,
          attempts: step.attempts,
          task_id: step.task_id,
          result: step.result,
          error: step.error,
          started_at: step.started_at?.toISOString() ?? null,
          finished_at: step.finished_at?.toISOString() ?? null
        })
    ),
    created_at: run.created_at.toISOString(),
    finished_at: run.finished_at?.toISOString() ?? null
  })

/** A definition's problems as a 422 at the body. */
const invalidDefinition = (error: ParseResult.ParseError) =>
  ValidationError.single(["body"], ParseResult.TreeFormatter.formatErrorSync(error), "invalid_workflow")

export class Workflows extends Effect.Service<Workflows>()("cairn/Workflows", {
  effect: Effect.gen(function*() {
    const repo = yield* WorkflowsRepo
    const sql = yield* SqlClient.SqlClient
    const tasks = yield* Tasks
    const bus = yield* Bus
    const bots = yield* Bots
    const tools = yield* ToolRegistry
    const { advance, sessionFor } = yield* advancing
    const { registerTool, registerTools, unregisterTool } = yield* toolTriggers((workflowId, args, triggeredBy) =>
      start(workflowId, args, triggeredBy, "tool")
    )

    const notFound = (what: string) => new WorkflowNotFound({ detail: `${what} not found` })

    const definitionOf = (row: WorkflowRow) => decodeDefinition(row.definition)

    const get = (id: string) =>
      Effect.flatMap(repo.find(id), (row) => (row ? Effect.succeed(toWorkflow(row)) : Effect.fail(notFound(`Workflow ${id}`))))
    const list = Effect.map(repo.list, (rows) => rows.map(toWorkflow))

    /** A definition sent to the API: checked whole (422), its bots known, its tool name its own. */
    const check = (body: unknown) =>
      Effect.gen(function*() {
        const definition = yield* Schema.decodeUnknown(WorkflowDefinition, { errors: "all", onExcessProperty: "error" })(body).pipe(
          Effect.catchAll(invalidDefinition)
        )
        const toolName = toolNameOf(definition)
        const taken = toolName ? tools.get(toolName) : undefined
        if (toolName && taken && taken.source !== `workflow:${definition.id}`) {
          return yield* ValidationError.single(
            ["body", "triggers", "tool", "name"],
            `A tool named ${toolName} exists already (${taken.source})`,
            "tool_name_taken"
          )
        }
        for (const bot of new Set([definition.bot, ...definition.steps.flatMap((step) => (step.bot ? [step.bot] : []))])) {
          yield* bots.get(bot).pipe(
            Effect.catchTag("BotNotFound", () => ValidationError.single(["body", "bot"], `Unknown bot: ${bot}`, "unknown_bot"))
          )
        }
        return definition
      })

    const create = (body: unknown) =>
      Effect.gen(function*() {
        const definition = yield* check(body)
        if (!(yield* repo.insert(definition.id, encodeDefinition(definition)))) {
          return yield* new WorkflowConflict({ detail: `A workflow ${definition.id} exists already` })
        }
        yield* registerTool(definition)
        yield* bus.publish("workflows", definition.id)
        return yield* get(definition.id)
      })

    const update = (id: string, body: unknown) =>
      Effect.gen(function*() {
        const definition = yield* check(body)
        if (definition.id !== id) return yield* ValidationError.single(["body", "id"], `The id is ${id}, as in the path`, "id_mismatch")
        const before = yield* repo.find(id)
        if (!before || !(yield* repo.update(id, encodeDefinition(definition)))) return yield* notFound(`Workflow ${id}`)
        yield* unregisterTool(definitionOf(before))
        yield* registerTool(definition)
        yield* bus.publish("workflows", id)
        return yield* get(id)
      })

    const remove = (id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(id)
        if (!row || !(yield* repo.remove(id))) return yield* notFound(`Workflow ${id}`)
        yield* unregisterTool(definitionOf(row))
        yield* bus.publish("workflows", id)
      })

    /** The workflow as YAML, as a file in workflows/ would hold it. */
    const exportYaml = (id: string) =>
      Effect.flatMap(
        repo.find(id),
        (row) => (row ? Effect.succeed(YAML.stringify(row.definition)) : Effect.fail(notFound(`Workflow ${id}`)))
      )

    const runOf = (runId: string) =>
      Effect.gen(function*() {
        // Run ids reach here as UUIDs: the routes' paths are checked (idPath), the rest are our own.
        const run = yield* repo.run(runId)
        if (!run) return yield* notFound(`Workflow run ${runId}`)
        return run
      })

    const view = (runId: string) =>
      Effect.gen(function*() {
        const run = yield* runOf(runId)
        return toRun(run, yield* repo.steps(runId))
      })

    const runs = (
      filter: { readonly workflowId?: string | undefined; readonly status?: string | undefined; readonly limit?: number | undefined }
    ) =>
      Effect.gen(function*() {
        const rows = yield* repo.runs({ ...filter, limit: filter.limit ?? 50 })
        return yield* Effect.forEach(rows, (run) => Effect.map(repo.steps(run.id), (steps) => toRun(run, steps)))
      })

    /** Starts a run with checked params (422 at `params.<name>` otherwise), and moves it on at once. */
    const start = (
      workflowId: string,
      given: Readonly<Record<string, unknown>>,
      triggeredBy: string,
      through: "api" | "tool" | "schedule" = "api"
    ) =>
      Effect.gen(function*() {
        const row = yield* repo.find(workflowId)
        if (!row) return yield* notFound(`Workflow ${workflowId}`)
        const definition = definitionOf(row)
        if (through === "api" && !definition.triggers.api) {
          return yield* conflict(`The workflow ${workflowId} is not started through the API (triggers.api is false)`)
        }
        const params = resolveParams(definition, given)
        if (Either.isLeft(params)) {
          return yield* new ValidationError({
            detail: params.left.map((problem) =>
              new ValidationIssue({ loc: ["body", "params", problem.name], msg: problem.message, type: problem.type })
            )
          })
        }
        const runId = randomUUID()
        const sessionId = yield* sessionFor({ id: runId }, definition.bot)
        // The run and its steps together: never a run without steps.
        yield* sql.withTransaction(
          repo.insertRun({
            id: runId,
            workflowId,
            definition: row.definition,
            params: params.right,
            triggeredBy,
            sessionId,
            stepIds: definition.steps.map((step) => step.id)
          })
        ).pipe(Effect.orDie)
        // The engine watches running runs' timeouts while there are any: it learns of this one now.
        yield* bus.publish("workflows", runId)
        yield* advance(runId)
        return yield* view(runId)
      })

    const stepOf = (runId: string, stepId: string) =>
      Effect.gen(function*() {
        const run = yield* runOf(runId)
        const step = (yield* repo.steps(runId)).find((row) => row.step_id === stepId)
        if (!step) return yield* notFound(`Step ${stepId} of run ${runId}`)
        return { run, step }
      })

    const conflict = (what: string) => new WorkflowConflict({ detail: what })

    /** Approves a step waiting for it; the run goes on. */
    const approve = (runId: string, stepId: string) =>
      Effect.gen(function*() {
        const { step } = yield* stepOf(runId, stepId)
        if (!(yield* repo.moveStep(runId, step.ordinal, ["waiting_approval"], "pending", { approved: true }))) {
          return yield* conflict(`Step ${stepId} is ${step.status}, not waiting for approval`)
        }
        yield* repo.moveRun(runId, ["waiting"], "running")
        yield* advance(runId)
        return yield* view(runId)
      })

    /** Skips a step not yet done (or failed); the run goes on without it. */
    const skip = (runId: string, stepId: string) =>
      Effect.gen(function*() {
        const { run, step } = yield* stepOf(runId, stepId)
        if (run.status === "complete" || run.status === "cancelled") return yield* conflict(`The run is ${run.status}`)
        if (!(yield* repo.moveStep(runId, step.ordinal, ["pending", "waiting_approval", "failed"], "skipped"))) {
          return yield* conflict(`Step ${stepId} is ${step.status}; only a pending, waiting or failed step can be skipped`)
        }
        yield* repo.moveRun(runId, ["waiting", "failed"], "running")
        yield* advance(runId)
        return yield* view(runId)
      })

    /** Runs a failed step again, with its attempts counted afresh; the run resumes. */
    const retry = (runId: string, stepId: string) =>
      Effect.gen(function*() {
        const { run, step } = yield* stepOf(runId, stepId)
        if (run.status !== "failed") return yield* conflict(`The run is ${run.status}; a step is retried in a failed run`)
        if (!(yield* repo.moveStep(runId, step.ordinal, ["failed"], "pending", { resetAttempts: true, error: null }))) {
          return yield* conflict(`Step ${stepId} is ${step.status}; only a failed step can be retried`)
        }
        yield* repo.moveRun(runId, ["failed"], "running")
        yield* advance(runId)
        return yield* view(runId)
      })

    /** Cancels a run: its steps not done are cancelled, a queued step task too. */
    const cancel = (runId: string) =>
      Effect.gen(function*() {
        const run = yield* runOf(runId)
        if (!(yield* repo.moveRun(runId, ["running", "waiting"], "cancelled"))) return yield* conflict(`The run is ${run.status}`)
        for (const taskId of yield* repo.cancelSteps(runId)) yield* tasks.cancel(taskId).pipe(Effect.ignore)
        return yield* view(runId)
      })

    return traced(
      "Workflows",
      { get, list, create, update, remove, exportYaml, start, view, runs, advance, approve, skip, retry, cancel, registerTools } as const
    )
  }),
  dependencies: [WorkflowsRepo.Default, Tasks.Default, Bus.Default, Sessions.Default, Bots.Default, ToolRegistryLive]
}) {}
