/**
 * What the agent domain can refuse or stop on. A turn's own stop (`SkillNotFound`) is reported by
 * the run engine as the stream's `error` event; the others are HTTP answers, each with its status.
 */
import { HttpApiSchema } from "@effect/platform"
import { Data, Schema } from "effect"

/** The bot, a carapace or the task names a skill the library does not have. */
export class SkillNotFound extends Data.TaggedError("SkillNotFound")<{ readonly message: string }> {}

/** A client's tool result names no request that is waiting. */
export class ToolRequestNotFound extends Schema.TaggedError<ToolRequestNotFound>()(
  "ToolRequestNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No pending tool request with that id" })
) {}

export class ApprovalNotFound extends Schema.TaggedError<ApprovalNotFound>()(
  "ApprovalNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No approval with that id" })
) {}

export class ApprovalDecided extends Schema.TaggedError<ApprovalDecided>()(
  "ApprovalDecided",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The approval was decided already" })
) {}
