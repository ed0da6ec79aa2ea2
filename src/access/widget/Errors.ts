/** What widget tokens can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class WidgetKeyUnusable extends Schema.TaggedError<WidgetKeyUnusable>()(
  "WidgetKeyUnusable",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The bot has no usable widget API key" })
) {}
