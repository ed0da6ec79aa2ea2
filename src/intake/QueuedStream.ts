/**
 * The stream of a message that was queued (its session busy, or the system paused): the `queued`
 * notice, then, once the task's turn runs, that run's events from its first, so the stream still
 * ends with the turn's `response`, as the blocking `/chat` waits for the answer. A task that ends
 * without running (cancelled while queued, failed before its run) ends the stream with that. The wait
 * wakes on the task's bus notice (the worker attaching the run), with the slow safety poll beside it.
 */
import { Duration, Effect, Stream } from "effect"
import type { SequencedEvent } from "../agent/Events.ts"
import * as Sse from "../runs/Sse.ts"
import type { Task } from "../tasks/Model.ts"
import { isFinished, taskSafetyPoll } from "../tasks/Tasks.ts"

type AgentEventOf = SequencedEvent["event"]

/** The end of a task that finished without a run of its own. */
const endedWithoutRun = (task: Task): ReadonlyArray<AgentEventOf> =>
  task.status === "cancelled"
    ? [{ type: "cancelled" }, { type: "response", text: "", tools_used: [], client_actions: [], session_id: task.session_id }]
    : Sse.endedWithError(task.error ?? "The queued message could not run", task.session_id)

/**
 * `notice` (the `queued` event, after a transcript) numbered 0, so a client that resumes from the
 * last id it saw gets the whole run; the run's own events keep their numbers.
 */
export const followQueued = <E1, E2>(
  notice: ReadonlyArray<AgentEventOf>,
  taskId: string,
  services: {
    readonly awaitTask: (id: string, reached: (task: Task) => boolean, every: Duration.DurationInput) => Effect.Effect<Task, E1>
    readonly runEvents: (runId: string, after: number) => Stream.Stream<SequencedEvent, E2>
  }
): Stream.Stream<SequencedEvent, E1 | E2> => {
  const started = services.awaitTask(taskId, (task) => task.run_id !== null || isFinished(task), taskSafetyPoll)
  const rest = Stream.unwrap(
    Effect.map(started, (task) =>
      task.run_id !== null
        ? services.runEvents(task.run_id, 0)
        : Stream.fromIterable(endedWithoutRun(task).map((event, index): SequencedEvent => ({ seq: index + 1, event }))))
  )
  return Stream.concat(Stream.fromIterable(notice.map((event): SequencedEvent => ({ seq: 0, event }))), rest)
}
