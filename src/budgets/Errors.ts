/** What the budgets domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class BudgetNotFound extends Schema.TaggedError<BudgetNotFound>()(
  "BudgetNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No budget with that id" })
) {}

/**
 * A call refused by a block budget: each surface answers it as its 429 (`Retry-After` at the
 * period's end), an `error` event with code `budget_exceeded` in a stream.
 */
export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  detail: Schema.String,
  budgetId: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}
