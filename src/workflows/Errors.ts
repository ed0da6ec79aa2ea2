/** What the workflows domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class WorkflowNotFound extends Schema.TaggedError<WorkflowNotFound>()(
  "WorkflowNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No workflow, run or step with that id" })
) {}

export class WorkflowConflict extends Schema.TaggedError<WorkflowConflict>()(
  "WorkflowConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "The workflow exists already, or the run or step is not in a state that allows this"
  })
) {}
