/** What channel bindings can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class BindingNotFound extends Schema.TaggedError<BindingNotFound>()(
  "BindingNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No such binding on the channel" })
) {}

export class BindingConflict extends Schema.TaggedError<BindingConflict>()(
  "BindingConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The channel is already bound to that integration" })
) {}
