/**
 * The arithmetic of budgets, apart from the database: which budgets a call counts against, the
 * period a moment falls in (in BUDGET_TIMEZONE), whether a call's worst case still fits, and where
 * a budget stands.
 */
import { DateTime } from "effect"
import type { BudgetPeriod, BudgetScope } from "./Model.ts"

/** A budget as the service matches and checks it. */
export interface BudgetDefinition {
  readonly id: string
  readonly scope: BudgetScope
  /** "" for global. */
  readonly target: string
  readonly period: BudgetPeriod
  readonly limit_usd: number | null
  readonly limit_tokens: number | null
  readonly action: "block" | "warn"
  readonly warn_at: number
}

/** Who a call is made for: what budgets are matched against. */
export interface BudgetSubject {
  /** "scoped_key", "user", "integration", "widget", "static_key"... */
  readonly principalKind?: string | undefined
  readonly principalId?: string | undefined
  /** The signed-in user the call is for: the user's own sign-in, or the owner of the key it is made with. */
  readonly user?: string | undefined
  readonly botId?: string | undefined
  readonly channelId?: string | undefined
}

/** Tokens and USD: a call's worst case, or what it used. */
export interface Cost {
  readonly tokens: number
  readonly usd: number
}

/** One period's spend of one budget. */
export interface PeriodSpend {
  readonly spent_usd: number
  readonly spent_tokens: number
  readonly reserved_usd: number
  readonly reserved_tokens: number
}

export const applies = (budget: BudgetDefinition, subject: BudgetSubject): boolean => {
  switch (budget.scope) {
    case "global":
      return true
    case "bot":
      return subject.botId === budget.target
    case "channel":
      return subject.channelId === budget.target
    case "key":
      return subject.principalKind === "scoped_key" && subject.principalId === budget.target
    case "user":
      // A user's budget counts their calls through any key they made, as the provider queue's lanes do.
      return (subject.principalKind === "user" && subject.principalId === budget.target) || subject.user === budget.target
    case "integration":
      return subject.principalKind === "integration" && subject.principalId === budget.target
  }
}

/** The start of time, as the one period of a `total` budget. */
export const totalStart = new Date(0)

/** The period `at` falls in: its first instant and the next period's (null for `total`, which never ends). */
export const periodOf = (
  period: BudgetPeriod,
  at: number,
  zone: DateTime.TimeZone
): { readonly start: Date; readonly end: Date | null } => {
  if (period === "total") return { start: totalStart, end: null }
  const local = DateTime.unsafeMakeZoned(at, { timeZone: zone })
  const start = DateTime.startOf(local, period)
  const end = DateTime.add(start, period === "day" ? { days: 1 } : { months: 1 })
  return { start: new Date(DateTime.toEpochMillis(start)), end: new Date(DateTime.toEpochMillis(end)) }
}

/** Which of a block budget's limits `cost` would pass on top of what is spent and reserved; null when it fits. */
export const wouldPass = (budget: BudgetDefinition, spend: PeriodSpend, cost: Cost): "tokens" | "usd" | null => {
  if (budget.limit_tokens !== null && spend.spent_tokens + spend.reserved_tokens + cost.tokens > budget.limit_tokens) return "tokens"
  // A float sum: a hair over the limit from rounding is not over it.
  if (budget.limit_usd !== null && spend.spent_usd + spend.reserved_usd + cost.usd > budget.limit_usd * (1 + 1e-9)) return "usd"
  return null
}

/** Spent over limit: the larger share of the limits the budget has. */
export const usedShare = (budget: BudgetDefinition, spend: Pick<PeriodSpend, "spent_usd" | "spent_tokens">): number =>
  Math.max(
    budget.limit_tokens !== null ? spend.spent_tokens / budget.limit_tokens : 0,
    budget.limit_usd !== null ? spend.spent_usd / budget.limit_usd : 0
  )

/** What is left of a limit after spent and reserved, never below 0; null without that limit. */
export const leftOf = (limit: number | null, spent: number, reserved: number): number | null =>
  limit === null ? null : Math.max(0, limit - spent - reserved)

const money = (usd: number) => `$${usd < 0.01 && usd > 0 ? usd.toPrecision(2) : usd.toFixed(2)}`

/** How a budget is named to a refused caller. */
export const describeBudget = (budget: BudgetDefinition): string =>
  `budget ${budget.id} (${budget.scope === "global" ? "global" : `${budget.scope} ${budget.target}`}, ${
    budget.period === "total" ? "total" : `per ${budget.period}`
  })`

/** Why a call was refused: the budget, what it has left, what the call could cost, and when it resets. */
export const refusalDetail = (
  budget: BudgetDefinition,
  spend: PeriodSpend,
  cost: Cost,
  limit: "tokens" | "usd",
  end: Date | null
): string => {
  const left = limit === "tokens"
    ? `${
      leftOf(budget.limit_tokens, spend.spent_tokens, spend.reserved_tokens)
    } of ${budget.limit_tokens} tokens are left and the call may use up to ${cost.tokens}`
    : `${money(leftOf(budget.limit_usd, spend.spent_usd, spend.reserved_usd) ?? 0)} of ${
      money(budget.limit_usd ?? 0)
    } is left and the call may cost up to ${money(cost.usd)}`
  const when = end === null ? "it never resets: raise its limit or delete it" : `it resets at ${end.toISOString()}`
  return `The ${describeBudget(budget)} is spent: ${left}; ${when}`
}
