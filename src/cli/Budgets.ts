/**
 * `cairn budgets`: each budget's current period as a bar of what is spent (and reserved by calls
 * in flight) against its limit, with when it resets. `--json` prints the statuses as the API
 * answers them.
 */
import { Command } from "@effect/cli"
import type { BudgetStatus } from "../budgets/Model.ts"
import { answerCommand } from "./Connection.ts"
import { style, table } from "./Output.ts"

const barWidth = 20

/** `[#######.....]`: the share spent, then the share reserved, of `barWidth` cells. */
export const budgetBar = (spent: number, reserved: number, limit: number) => {
  const full = Math.min(barWidth, Math.round((spent / limit) * barWidth))
  const held = Math.min(barWidth - full, Math.round((reserved / limit) * barWidth))
  return `[${"#".repeat(full)}${"+".repeat(held)}${".".repeat(barWidth - full - held)}]`
}

const usd = (value: number) => `$${value.toFixed(value < 1 ? 4 : 2)}`

/** One line per limit the budget has: the bar, spent of limit, and the share. */
const limits = (budget: BudgetStatus): ReadonlyArray<string> => [
  ...(budget.limit_tokens === null ? [] : [
    `${budgetBar(budget.spent_tokens, budget.reserved_tokens, budget.limit_tokens)} ${budget.spent_tokens} of ${budget.limit_tokens} tokens`
  ]),
  ...(budget.limit_usd === null ? [] : [
    `${budgetBar(budget.spent_usd, budget.reserved_usd, budget.limit_usd)} ${usd(budget.spent_usd)} of ${usd(budget.limit_usd)}`
  ])
]

const stateOf = (budget: BudgetStatus) =>
  budget.state === "exceeded" ? style.red("exceeded") : budget.state === "warning" ? style.yellow("warning") : style.green("ok")

export const renderBudgets = (budgets: ReadonlyArray<BudgetStatus>) =>
  budgets.length === 0
    ? "No budgets. Add one with POST /api/v1/admin/budgets (docs/budgets.md)."
    : table(
      ["ID", "SCOPE", "PERIOD", "ACTION", "USED", "STATE", "RESETS"],
      budgets.flatMap((budget) => {
        const [first = "", ...more] = limits(budget)
        return [
          [
            budget.id,
            budget.scope === "global" ? "global" : `${budget.scope} ${budget.target}`,
            budget.period,
            budget.action,
            first,
            stateOf(budget),
            budget.period_end === null ? "never" : budget.period_end.toISOString()
          ],
          ...more.map((line) => ["", "", "", "", line, "", ""])
        ]
      })
    )

export const budgetsCommand = answerCommand("budgets", {}, (client) => client.budgets.list(), renderBudgets).pipe(
  Command.withDescription("Spend caps: each budget's spend this period against its limit (# spent, + reserved by calls in flight)")
)
