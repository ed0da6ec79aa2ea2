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

/** The 404 for a tool request id: unknown, answered already, or of a session the caller does not reach. */
export const toolRequestNotFound = (requestId: string) => new ToolRequestNotFound({ detail: `No pending tool request: ${requestId}` })

export class ApprovalNotFound extends Schema.TaggedError<ApprovalNotFound>()(
  "ApprovalNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No approval with that id" })
) {}

/** The 404 for an approval id: unknown, or of a session the caller does not reach. */
export const approvalNotFound = (id: string) => new ApprovalNotFound({ detail: `Approval not found: ${id}` })

export class ApprovalDecided extends Schema.TaggedError<ApprovalDecided>()(
  "ApprovalDecided",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The approval was decided already" })
) {}
