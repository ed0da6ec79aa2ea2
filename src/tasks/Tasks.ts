/** Tasks: enqueue, read, list, wait for, cancel. The worker (Worker.ts) runs them. */
import { Duration, Effect, Option, Queue, Schedule } from "effect"
import { isUuid } from "../contract/Params.ts"
import { Bus } from "../db/Bus.ts"
import { makeDispatchSecrets, maskDispatchConfig } from "../secrets/DispatchConfig.ts"
import { traced } from "../telemetry/Spans.ts"
import { TaskConflict, TaskNotFound } from "./Errors.ts"
import { type NewTask, Task } from "./Model.ts"
import { type FinishedOutcome, type TaskRow, TasksRepo } from "./Repo.ts"

/** A task as responses show it: secrets in its dispatch_config masked. */
/** Whether a task has ended: complete, failed or cancelled. */
export const isFinished = (task: Task) => task.status !== "pending" && task.status !== "running"

/** How often a wait on a task reads it with no notice (a missed one costs at most this). */
export const taskSafetyPoll = Duration.seconds(5)

export const toTask = (row: TaskRow) => new Task({ ...row, dispatch_config: maskDispatchConfig(row.dispatch_config) })

export class Tasks extends Effect.Service<Tasks>()("cairn/Tasks", {
  effect: Effect.gen(function*() {
    const repo = yield* TasksRepo
    const bus = yield* Bus
    const secrets = yield* makeDispatchSecrets
    // Rows an older release stored with a URL credential in the clear are sealed once, here.
    yield* repo.resealDispatchConfigs(secrets.seal)
    // Wakes this process's worker when a slot here frees (a task finished here), so it is refilled
    // at once; a queued task wakes every process's worker through the bus.
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
        Effect.tap(() => bus.publish("tasks", "queued"))
      )

    /** Records a run that started at once as a finished task (sealed like a queued one's); answers its id. */
    const recordFinished = (task: NewTask, outcome: FinishedOutcome) =>
      Effect.map(repo.insertFinished({ ...task, dispatchConfig: secrets.seal(task.dispatchConfig ?? {}) }, outcome), (row) => row.id)

    const list = (filter: { readonly status?: string; readonly sessionId?: string; readonly botId?: string; readonly limit?: number }) =>
      Effect.map(repo.list({ ...filter, limit: filter.limit ?? 50 }), (rows) => rows.map(toTask))

    /** Cancels a pending task; a running or finished one is a conflict. */
    const cancel = (id: string) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* notFound(id)
        const { cancelled, row } = yield* repo.cancel(id)
        if (!row) return yield* notFound(id)
        if (cancelled) {
          yield* changed(id)
          return toTask(row)
        }
        return yield* new TaskConflict({
          detail: row.status === "running"
            ? `Task ${id} is running; only pending tasks can be cancelled (stop the run with POST /chat/cancel)`
            : `Task ${id} is already ${row.status}`
        })
      })

    /**
     * The task once `reached` holds of it (it may never), read again when the bus says it changed,
     * and at least every `every` (a change the bus did not tell of: a lease that ran out).
     */
    const awaitTask = (id: string, reached: (task: Task) => boolean, every: Duration.DurationInput) =>
      bus.awaitSome("task", id, Effect.map(get(id), (task) => (reached(task) ? Option.some(task) : Option.none())), Schedule.spaced(every))

    /** Waits until the task is complete, failed or cancelled. */
    const awaitFinished = (id: string) => awaitTask(id, isFinished, taskSafetyPoll)

    /** Tells whoever waits on the task (in any process) that it changed. */
    const changed = (id: string) => bus.publish("task", id)

    /** `changed` for several tasks, in one notice (none for none). */
    const changedAll = (ids: ReadonlyArray<string>) => bus.publishAll("task", ids)

    return traced(
      "Tasks",
      {
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
        changed,
        changedAll,
        /** Completes when work was signalled since the last take. */
        awaitWork: Queue.take(workSignal)
      } as const
    )
  }),
  dependencies: [TasksRepo.Default, Bus.Default]
}) {}
