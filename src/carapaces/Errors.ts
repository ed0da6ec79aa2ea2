/** What the carapaces domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class CarapaceNotFound extends Schema.TaggedError<CarapaceNotFound>()(
  "CarapaceNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No carapace with that id" })
) {}

export class CarapaceConflict extends Schema.TaggedError<CarapaceConflict>()(
  "CarapaceConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "The id is taken, the carapace is included by another, or an include would make a cycle"
  })
) {}
