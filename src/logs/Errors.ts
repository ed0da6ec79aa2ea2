/** What the logs domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class TraceNotFound extends Schema.TaggedError<TraceNotFound>()(
  "TraceNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No span was recorded under that correlation id" })
) {}
