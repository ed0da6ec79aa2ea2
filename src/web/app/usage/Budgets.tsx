/**
 * The budgets on the usage page: each limit of each budget as a bar of this period's spend (and,
 * lighter, what calls in flight have reserved) against the limit. Each bar is a `meter` with its
 * figures as its text, and the same figures are written beside it, so nothing is told by colour
 * alone.
 */
import type { BudgetStatus } from "../../../budgets/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { Section, StatusBadge } from "../ui/Page.tsx"
import { useLoad } from "../ui/useLoad.ts"

const tokens = (value: number) => value.toLocaleString()
const usd = (value: number) => `$${value.toFixed(value !== 0 && Math.abs(value) < 0.01 ? 4 : 2)}`
const percent = (part: number, whole: number) => `${Math.round((part / whole) * 100)}%`

const scopeLabel = (budget: BudgetStatus) => (budget.scope === "global" ? "Every call" : `${budget.scope} ${budget.target}`)
const periodLabel = (budget: BudgetStatus) =>
  budget.period === "total" ? "in total" : `per ${budget.period}, resets ${budget.period_end?.toLocaleString() ?? ""}`

const states = {
  ok: { badge: "ok", label: "Within budget" },
  warning: { badge: "warn", label: "Past its warning" },
  exceeded: { badge: "bad", label: "Spent" }
} as const

const Bar = ({ name, spent, reserved, limit, format, state }: {
  readonly name: string
  readonly spent: number
  readonly reserved: number
  readonly limit: number
  readonly format: (value: number) => string
  readonly state: BudgetStatus["state"]
}) => {
  const spentWidth = Math.min(100, (spent / limit) * 100)
  const reservedWidth = Math.min(100 - spentWidth, (reserved / limit) * 100)
  const text = `${format(spent)} of ${format(limit)} (${percent(spent, limit)})${reserved > 0 ? `, ${format(reserved)} reserved` : ""}`
  return (
    <div className="budget-limit">
      <div
        className="budget-bar"
        data-state={state}
        role="meter"
        aria-label={name}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={Math.min(spent, limit)}
        aria-valuetext={text}
      >
        <span className="spent" style={{ width: `${spentWidth}%` }} />
        <span className="reserved" style={{ width: `${reservedWidth}%` }} />
      </div>
      <span className="budget-figures">{text}</span>
    </div>
  )
}

export const BudgetBars = ({ auth }: Pick<PageProps, "auth">) => {
  const may = allows(auth, ["budgets", "list"])
  const budgets = useLoad(() => (may ? auth.call((client) => client.budgets.list()) : Promise.resolve([])), [auth, may])
  if (!may || !budgets.data || budgets.data.length === 0) return null
  return (
    <Section title="Budgets">
      <ul className="budgets">
        {budgets.data.map((budget) => {
          const name = `${scopeLabel(budget)} ${periodLabel(budget)}`
          return (
            <li key={budget.id}>
              <div className="budget-head">
                <strong>{scopeLabel(budget)}</strong>
                <span className="muted">{periodLabel(budget)}{budget.action === "warn" ? " (warns only)" : ""}</span>
                <span className="spacer" />
                <StatusBadge state={states[budget.state].badge} label={states[budget.state].label} />
              </div>
              {budget.limit_tokens !== null
                ? (
                  <Bar
                    name={`${name}: tokens`}
                    spent={budget.spent_tokens}
                    reserved={budget.reserved_tokens}
                    limit={budget.limit_tokens}
                    format={(value) => `${tokens(value)} tokens`}
                    state={budget.state}
                  />
                )
                : null}
              {budget.limit_usd !== null
                ? (
                  <Bar
                    name={`${name}: cost`}
                    spent={budget.spent_usd}
                    reserved={budget.reserved_usd}
                    limit={budget.limit_usd}
                    format={usd}
                    state={budget.state}
                  />
                )
                : null}
            </li>
          )
        })}
      </ul>
    </Section>
  )
}
