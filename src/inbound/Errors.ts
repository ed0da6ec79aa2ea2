/** What the dead-letter routes can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Data, Schema } from "effect"

export class DeadLetterNotFound extends Schema.TaggedError<DeadLetterNotFound>()(
  "DeadLetterNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No inbound item with that id" })
) {}

export class DeadLetterConflict extends Schema.TaggedError<DeadLetterConflict>()(
  "DeadLetterConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "The item is not a dead letter (any more): it was retried, discarded, or never died"
  })
) {}

/**
 * The server is stopping (a drain): new inbound items are not taken, so none is acknowledged and
 * then dropped; the source tries again (a webhook's 503, the next poll, the next start's catch-up).
 */
export class InboundDraining extends Data.TaggedError("InboundDraining")<{ readonly message: string }> {}
