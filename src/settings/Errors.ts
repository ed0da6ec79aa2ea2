/** What runtime settings can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class UnknownSetting extends Schema.TaggedError<UnknownSetting>()(
  "UnknownSetting",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No setting with that key" })
) {}
