/**
 * Workflows: definitions (CRUD, files synced at start, YAML export), runs (params checked against
 * their declared types), and the engine that moves a run on. A run's state machine:
 *
 *   run:  running → waiting (a step waits for approval) → running → complete | failed | cancelled
 *   step: pending → (when false) skipped
 *         pending → (approval) waiting_approval → (approve) pending → running
 *         pending → running → complete | (failure or timeout, attempts left) pending → … | failed
 *         failed → (retry) pending; pending | waiting_approval | failed → (skip) skipped
 *
 * A step runs as a task of the task queue (so a restart neither loses nor repeats it) in the run's
 * session with its bot. Every move is a conditional update from the status it leaves, so two
 * processes (or the engine and an API call) never both move the same step.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, ParseResult, Schema } from "effect"
import { randomUUID } from "node:crypto"
import YAML from "yaml"
import { jsonSchemaTool } from "../agent/Tool.ts"
import { layer as ToolRegistryLive, ToolRegistry } from "../agent/Tools.ts"
import { Bots } from "../bots/Bots.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { Bus } from "../db/Bus.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Tasks } from "../tasks/Tasks.ts"
import { traced } from "../telemetry/Spans.ts"
import { holds, type ParamValue, render, resolveParams, type StepStatus, toolNameOf, WorkflowDefinition } from "./Definition.ts"
import { WorkflowConflict, WorkflowNotFound } from "./Errors.ts"
import { Workflow, WorkflowRun, WorkflowStep } from "./Model.ts"
import { type RunRow, type StepRow, type WorkflowRow, WorkflowsRepo } from "./Repo.ts"

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
    const sessions = yield* Sessions
    const bots = yield* Bots
    const tools = yield* ToolRegistry

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

    const sessionFor = (run: { readonly id: string }, botId: string) =>
      sessions.getOrCreate({ botId, clientId: `workflow:${run.id}` }).pipe(
        Effect.map((session) => session.id),
        Effect.catchTag(
          "BotNotFound",
          () => ValidationError.single(["body", "bot"], `The workflow's bot ${botId} does not exist`, "unknown_bot")
        )
      )

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

    /** Starts a step's attempt: its task and its move to running, together or not at all. */
    const startStep = (run: RunRow, ordinal: number, prompt: string, botId: string, toolNames: ReadonlyArray<string> | undefined) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const sessionId = yield* sessionFor(run, botId)
          const task = yield* tasks.enqueue({
            source: `workflow:${run.workflow_id}`,
            botId,
            sessionId,
            channelId: null,
            clientId: `workflow:${run.id}`,
            prompt,
            ...(toolNames ? { executionConfig: { tools: toolNames } } : {})
          })
          // Another mover got there first: this attempt is taken back with its task.
          if (!(yield* repo.moveStep(run.id, ordinal, ["pending"], "running", { taskId: task.id, attempt: true, error: null }))) {
            return yield* Effect.fail("moved" as const)
          }
        })
      ).pipe(
        Effect.catchIf((error) => error === "moved", () => Effect.void),
        // A step that cannot start (its bot was deleted) fails, and with it the run; any other
        // failure (the database away) leaves it pending for the next move.
        Effect.catchTag("ValidationError", (error) => {
          const message = error.detail.map((issue) => issue.msg).join("; ")
          return Effect.zipRight(
            repo.moveStep(run.id, ordinal, ["pending"], "failed", { error: message }),
            repo.moveRun(run.id, ["running"], "failed", `A step could not start: ${message}`)
          )
        })
      )

    /** Moves a running run on as far as it can go now. */
    const advance = (runId: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        const run = yield* repo.run(runId)
        if (!run || run.status !== "running") return
        const definition = decodeDefinition(run.definition)
        const params = run.params as Record<string, ParamValue>
        const earlier: Record<string, { status: StepStatus; result: string | null }> = {}
        for (const step of yield* repo.steps(runId)) {
          const spec = definition.steps[step.ordinal]!
          const settled = (status: StepStatus, result: string | null) => {
            earlier[spec.id] = { status, result }
          }
          switch (step.status) {
            case "complete":
            case "skipped":
            case "cancelled":
            case "failed":
              // A failed step here is one that lets the run go on (on_failure: continue).
              settled(step.status, step.result)
              continue
            case "waiting_approval":
              return
            case "pending": {
              if (!holds(spec.when, params, earlier)) {
                yield* repo.moveStep(runId, step.ordinal, ["pending"], "skipped")
                settled("skipped", null)
                continue
              }
              if (spec.approval && !step.approved) {
                if (yield* repo.moveStep(runId, step.ordinal, ["pending"], "waiting_approval")) {
                  yield* repo.moveRun(runId, ["running"], "waiting")
                }
                return
              }
              const results = Object.fromEntries(Object.entries(earlier).map(([id, state]) => [id, state.result]))
              yield* startStep(run, step.ordinal, render(spec.prompt, params, results), spec.bot ?? definition.bot, spec.tools)
              return
            }
            case "running": {
              const task = step.task_id ? yield* repo.taskState(step.task_id) : undefined
              if (task?.status === "complete") {
                yield* repo.moveStep(runId, step.ordinal, ["running"], "complete", { result: task.result ?? "" })
                settled("complete", task.result ?? "")
                continue
              }
              const timedOut = step.started_at !== null && Date.now() - step.started_at.getTime() > spec.timeout_seconds * 1000
              const ended = task === undefined || task.status === "failed" || task.status === "cancelled"
              if (!ended && !timedOut) {
                return
              }
              const error = timedOut && !ended
                ? `Timed out after ${spec.timeout_seconds} s`
                : (task?.error ?? `The step's task ended ${task?.status ?? "missing"}`)
              if (timedOut && !ended && step.task_id) yield* tasks.cancel(step.task_id).pipe(Effect.ignore)
              if (step.attempts <= spec.retries) {
                // Another attempt, started on the next move.
                yield* repo.moveStep(runId, step.ordinal, ["running"], "pending", { error })
                return
              }
              if (!(yield* repo.moveStep(runId, step.ordinal, ["running"], "failed", { error }))) return
              if (spec.on_failure === "fail") {
                yield* repo.moveRun(runId, ["running"], "failed", `Step ${spec.id} failed: ${error}`)
                return
              }
              settled("failed", null)
              continue
            }
          }
        }
        yield* repo.moveRun(runId, ["running"], "complete")
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning(`Workflow run ${runId} could not move on`, cause)))

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

    /** Takes back a workflow's tool, only when it is that workflow's (never a tool of another source). */
    const unregisterTool = (definition: WorkflowDefinition) => {
      const name = toolNameOf(definition)
      return name && tools.get(name)?.source === `workflow:${definition.id}` ? tools.unregister(name) : Effect.void
    }

    /** The tool a workflow's tool trigger gives bots: its params are the tool's, the answer names the run. */
    const registerTool = (definition: WorkflowDefinition) => {
      const name = toolNameOf(definition)
      if (!name) return Effect.void
      const taken = tools.get(name)
      if (taken && taken.source !== `workflow:${definition.id}`) {
        return Effect.logWarning(`The tool of workflow ${definition.id} is not registered: ${name} is ${taken.source}'s`)
      }
      const properties = Object.fromEntries(
        Object.entries(definition.params).map((
          [param, spec]
        ) => [param, { type: spec.type, ...(spec.description ? { description: spec.description } : {}) }])
      )
      const required = Object.entries(definition.params).flatMap((
        [param, spec]
      ) => (spec.required && spec.default === undefined ? [param] : []))
      const description = definition.triggers.tool?.description ??
        `Start the workflow "${definition.name}": ${definition.description}`.trim()
      // Starting a run changes what the server keeps; its steps are checked as they run.
      return tools.register(
        jsonSchemaTool({
          name,
          description,
          parameters: { type: "object", properties, required },
          effect: "write",
          source: `workflow:${definition.id}`,
          handler: (args, context) =>
            Effect.map(
              start(definition.id, args, `tool:${context.botId}`, "tool"),
              (run) => ({ workflow_run_id: run.id, status: run.status })
            )
        })
      )
    }

    /** Registers the tools of every stored workflow that has a tool trigger (at start). */
    const registerTools = Effect.gen(function*() {
      for (const row of yield* repo.list) {
        const definition = yield* Effect.either(Effect.try(() => definitionOf(row)))
        if (Either.isRight(definition)) yield* registerTool(definition.right)
      }
    })

    return traced(
      "Workflows",
      { get, list, create, update, remove, exportYaml, start, view, runs, advance, approve, skip, retry, cancel, registerTools } as const
    )
  }),
  dependencies: [WorkflowsRepo.Default, Tasks.Default, Bus.Default, Sessions.Default, Bots.Default, ToolRegistryLive]
}) {}
