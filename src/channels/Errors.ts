/** What the channels domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class ChannelNotFound extends Schema.TaggedError<ChannelNotFound>()(
  "ChannelNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No channel with that id" })
) {}

export class ChannelConflict extends Schema.TaggedError<ChannelConflict>()(
  "ChannelConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "A channel for that client and bot exists already" })
) {}
