/** Tasks: enqueue, read, list, wait for, cancel. The worker (Worker.ts) runs them. */
import { Duration, Effect, Queue, Schedule } from "effect"
import { isUuid } from "../contract/Params.ts"
import { makeDispatchSecrets, maskDispatchConfig } from "../secrets/DispatchConfig.ts"
import { Task, type NewTask } from "./Model.ts"
import { TasksRepo, type FinishedOutcome, type TaskRow } from "./Repo.ts"
import { traced } from "../telemetry/Spans.ts"
import { TaskConflict, TaskNotFound } from "./Errors.ts"

/** A task as responses show it: secrets in its dispatch_config masked. */
/** Whether a task has ended: complete, failed or cancelled. */
export const isFinished = (task: Task) => task.status !== "pending" && task.status !== "running"

export const toTask = (row: TaskRow) => new Task({ ...row, dispatch_config: maskDispatchConfig(row.dispatch_config) })


export class Tasks extends Effect.Service<Tasks>()("cairn/Tasks", {
  effect: Effect.gen(function* () {
    const repo = yield* TasksRepo
    const secrets = yield* makeDispatchSecrets
    // Rows an older release stored with a URL credential in the clear are sealed once, here.
    yield* repo.resealDispatchConfigs(secrets.seal)
    // Wakes this process's worker when there may be work (a task queued or finished here), so a
    // slot is refilled at once instead of at the next poll. Other processes find it by polling.
    const workSignal = yield* Queue.sliding<void>(1)
    const signalWork = Queue.offer(workSignal, undefined)

    const notFound = (id: string) => new TaskNotFound({ detail: `Task not found: ${id}` })

    const get = (id: string) =>
      isUuid(id)
        ? Effect.flatMap(repo.find(id), (row) => (row ? Effect.succeed(toTask(row)) : Effect.fail(notFound(id))))
        : Effect.fail(notFound(id))

    /** Queues a task; secrets in its dispatch_config are sealed before they are stored. */
    const enqueue = (task: NewTask) =>
      Effect.map(repo.insert({ ...task, dispatchConfig: secrets.seal(task.dispatchConfig ?? {}) }), toTask).pipe(
        Effect.tap(() => signalWork)
      )

    /** Records a run that started at once as a finished task (sealed like a queued one's); answers its id. */
    const recordFinished = (task: NewTask, outcome: FinishedOutcome) =>
      Effect.map(repo.insertFinished({ ...task, dispatchConfig: secrets.seal(task.dispatchConfig ?? {}) }, outcome), (row) => row.id)

    const list = (filter: { readonly status?: string; readonly sessionId?: string; readonly botId?: string; readonly limit?: number }) =>
      Effect.map(repo.list({ ...filter, limit: filter.limit ?? 50 }), (rows) => rows.map(toTask))

    /** Cancels a pending task; a running or finished one is a conflict. */
    const cancel = (id: string) =>
      Effect.gen(function* () {
        if (!isUuid(id)) return yield* notFound(id)
        const { cancelled, row } = yield* repo.cancel(id)
        if (!row) return yield* notFound(id)
        if (cancelled) return toTask(row)
        return yield* new TaskConflict({
          detail:
            row.status === "running"
              ? `Task ${id} is running; only pending tasks can be cancelled (stop the run with POST /chat/cancel)`
              : `Task ${id} is already ${row.status}`
        })
      })

    /** The task once `reached` holds of it, read again every `every` until then (it may never). */
    const awaitTask = (id: string, reached: (task: Task) => boolean, every: Duration.DurationInput) =>
      get(id).pipe(
        Effect.filterOrFail(reached, () => "unreached" as const),
        Effect.retry({ schedule: Schedule.spaced(every), while: (error) => error === "unreached" }),
        Effect.catchIf((error): error is "unreached" => error === "unreached", () => Effect.never)
      )

    /** Polls until the task is complete, failed or cancelled. */
    const awaitFinished = (id: string) => awaitTask(id, isFinished, Duration.millis(200))

    return traced("Tasks", {
      get,
      awaitTask,
      enqueue,
      recordFinished,
      list,
      cancel,
      awaitFinished,
      cancelPending: repo.cancelPending,
      cancelPendingBySource: repo.cancelPendingBySource,
      openDispatchConfig: secrets.open,
      signalWork,
      /** Completes when work was signalled since the last take. */
      awaitWork: Queue.take(workSignal)
    } as const)
  }),
  dependencies: [TasksRepo.Default]
}) {}
