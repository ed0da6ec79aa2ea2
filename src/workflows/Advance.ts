/**
 * How a workflow run moves on: its state machine, each move made from what the database holds.
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
import { Effect, Schema } from "effect"
import { ValidationError } from "../contract/Errors.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Tasks } from "../tasks/Tasks.ts"
import { holds, type ParamValue, render, type StepStatus, WorkflowDefinition } from "./Definition.ts"
import { type RunRow, WorkflowsRepo } from "./Repo.ts"

const decodeDefinition = Schema.decodeUnknownSync(WorkflowDefinition)

/** `advance` moves a run on; `sessionFor` is the session a run's steps with a bot run in. */
export const advancing = Effect.gen(function*() {
  const repo = yield* WorkflowsRepo
  const sql = yield* SqlClient.SqlClient
  const tasks = yield* Tasks
  const sessions = yield* Sessions

  const sessionFor = (run: { readonly id: string }, botId: string) =>
    sessions.getOrCreate({ botId, clientId: `workflow:${run.id}` }).pipe(
      Effect.map((session) => session.id),
      Effect.catchTag(
        "BotNotFound",
        () => ValidationError.single(["body", "bot"], `The workflow's bot ${botId} does not exist`, "unknown_bot")
      )
    )

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

  return { advance, sessionFor } as const
})
