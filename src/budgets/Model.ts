/** Budgets (spend caps on LLM calls) as the API shows and takes them. Part of the contract: imports only `effect`. */
import { Schema } from "effect"
import { Timestamp } from "../contract/Time.ts"

/** Whose calls a budget counts: every call, or those of one bot, API key, user, channel or integration. */
export const BudgetScope = Schema.Literal("global", "bot", "key", "user", "channel", "integration")
export type BudgetScope = typeof BudgetScope.Type

/** A day or a month in BUDGET_TIMEZONE, or all time. */
export const BudgetPeriod = Schema.Literal("day", "month", "total")
export type BudgetPeriod = typeof BudgetPeriod.Type

/** `block`: a call whose worst case does not fit is refused (429); `warn`: only the hook events fire. */
export const BudgetAction = Schema.Literal("block", "warn")
export type BudgetAction = typeof BudgetAction.Type

/** Where the budget stands this period: under `warn_at`, past it, or at its limit. */
export const BudgetState = Schema.Literal("ok", "warning", "exceeded")

const LimitUsd = Schema.Number.pipe(Schema.finite(), Schema.greaterThan(0), Schema.lessThanOrEqualTo(1e9))
const LimitTokens = Schema.Int.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1e15))
const WarnAt = Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))
const Target = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

/** Unknown fields are refused: a typo never looks like a success. */
const strict = { parseOptions: { errors: "all", onExcessProperty: "error" } } as const

/** `POST /api/v1/admin/budgets`. */
export const CreateBudget = Schema.Struct({
  scope: BudgetScope,
  /** The bot, key, user, channel or integration id; none for `global`. */
  target: Schema.optionalWith(Schema.NullOr(Target), { default: () => null }),
  period: BudgetPeriod,
  limit_usd: Schema.optionalWith(Schema.NullOr(LimitUsd), { default: () => null }),
  limit_tokens: Schema.optionalWith(Schema.NullOr(LimitTokens), { default: () => null }),
  action: Schema.optionalWith(BudgetAction, { default: () => "block" as const }),
  /** The share of a limit at which `budget_warning` fires. */
  warn_at: Schema.optionalWith(WarnAt, { default: () => 0.8 })
}).pipe(
  Schema.filter((body) => body.limit_usd !== null || body.limit_tokens !== null || "Give limit_usd, limit_tokens or both"),
  Schema.filter((body) =>
    (body.scope === "global") === (body.target === null) ||
    (body.scope === "global" ? "A global budget has no target" : `A ${body.scope} budget needs a target: the ${body.scope}'s id`)
  )
).annotations(strict)
export type CreateBudget = typeof CreateBudget.Type

/** `PATCH /api/v1/admin/budgets/{id}`: what it names changes; scope and target stay. */
export const UpdateBudget = Schema.Struct({
  period: Schema.optional(BudgetPeriod),
  limit_usd: Schema.optional(Schema.NullOr(LimitUsd)),
  limit_tokens: Schema.optional(Schema.NullOr(LimitTokens)),
  action: Schema.optional(BudgetAction),
  warn_at: Schema.optional(WarnAt)
}).annotations(strict)
export type UpdateBudget = typeof UpdateBudget.Type

const budgetFields = {
  id: Schema.String,
  scope: BudgetScope,
  target: Schema.NullOr(Schema.String),
  period: BudgetPeriod,
  limit_usd: Schema.NullOr(Schema.Number),
  limit_tokens: Schema.NullOr(Schema.Number),
  action: BudgetAction,
  warn_at: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
}

export class Budget extends Schema.Class<Budget>("Budget")(budgetFields) {}

/** A budget with its current period's spend. */
export class BudgetStatus extends Schema.Class<BudgetStatus>("BudgetStatus")({
  ...budgetFields,
  /** The current period, in BUDGET_TIMEZONE; null for `total`, which never ends. */
  period_start: Schema.NullOr(Timestamp),
  period_end: Schema.NullOr(Timestamp),
  /** What settled calls cost this period. */
  spent_usd: Schema.Number,
  spent_tokens: Schema.Number,
  /** The worst case of the calls in flight, held until each settles to what it really used. */
  reserved_usd: Schema.Number,
  reserved_tokens: Schema.Number,
  /** Calls holding a reservation now. */
  in_flight: Schema.Number,
  /** The limit less spent and reserved (never below 0); null without that limit. */
  left_usd: Schema.NullOr(Schema.Number),
  left_tokens: Schema.NullOr(Schema.Number),
  /** Spent over limit, the larger of the two limits' shares (may pass 1 for a `warn` budget). */
  used: Schema.Number,
  state: BudgetState
}) {}
