/** What the bots domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class BotNotFound extends Schema.TaggedError<BotNotFound>()(
  "BotNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No bot with that id" })
) {}

export class BotConflict extends Schema.TaggedError<BotConflict>()(
  "BotConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The id is taken, or the default bot would be deleted" })
) {}
