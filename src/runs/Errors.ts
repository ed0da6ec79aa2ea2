/** How a run can end without an answer, and what the run log can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class RunNotFound extends Schema.TaggedError<RunNotFound>()(
  "RunNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No such run in the session" })
) {}

export class RunCancelled extends Schema.TaggedError<RunCancelled>()(
  "RunCancelled",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The run, or the queued message, was cancelled" })
) {}

export class SessionBusy extends Schema.TaggedError<SessionBusy>()(
  "SessionBusy",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "The session is locked by a running turn (or the system is paused) and the request asked not to wait (if_busy: reject)"
  })
) {}

export class RunFailed extends Schema.TaggedError<RunFailed>()(
  "RunFailed",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 502, description: "The run failed (the model or a tool)" })
) {}

export class RunInterrupted extends Schema.TaggedError<RunInterrupted>()(
  "RunInterrupted",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 503, description: "The server stopped the run (it is shutting down)" })
) {}
