/** What the todos domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class TodoNotFound extends Schema.TaggedError<TodoNotFound>()(
  "TodoNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No todo with that id" })
) {}
