/** What the sessions domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()(
  "SessionNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No session with that id" })
) {}
