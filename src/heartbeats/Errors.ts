/** What the heartbeats domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class HeartbeatNotFound extends Schema.TaggedError<HeartbeatNotFound>()(
  "HeartbeatNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "The channel has no heartbeat" })
) {}
