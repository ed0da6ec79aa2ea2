/** What the tasks domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()(
  "TaskNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No task with that id" })
) {}

export class TaskConflict extends Schema.TaggedError<TaskConflict>()(
  "TaskConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The task is no longer in a state that allows this" })
) {}
