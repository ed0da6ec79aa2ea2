/**
 * Usage: LLM tokens and cost for a date range, grouped by day, model, bot or key, as two bar
 * charts and the table with the same figures (the charts' text alternative); above them, each
 * budget's spend this period.
 */
import { useMemo, useState } from "react"
import type { UsageTotals } from "../../../usage/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { Select, TextField } from "../ui/Field.tsx"
import { Page, Section } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useLoad } from "../ui/useLoad.ts"
import { BarChart, type BarSeries } from "./BarChart.tsx"
import { BudgetBars } from "./Budgets.tsx"
import { type Grouping, groupings, rowsOf, type UsageRow } from "./grouping.ts"

/** A UTC day as "YYYY-MM-DD", `offset` days from today. */
const utcDay = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const startOf = (day: string) => new Date(`${day}T00:00:00Z`)
const dayAfter = (day: string) => new Date(startOf(day).getTime() + 86_400_000)

const tokens = (value: number) => value.toLocaleString()
const usd = (value: number) => `$${value.toFixed(value !== 0 && Math.abs(value) < 0.01 ? 4 : 2)}`

const colours = { prompt: "#4e79a7", completion: "#f28e2b", cost: "#59a14f" }

const TotalsList = ({ totals }: { readonly totals: UsageTotals }) => (
  <dl className="totals" aria-label="Totals">
    <div>
      <dt>Calls</dt>
      <dd>{totals.calls.toLocaleString()}{totals.errors > 0 ? ` (${totals.errors} failed)` : ""}</dd>
    </div>
    <div>
      <dt>Tokens</dt>
      <dd>{tokens(totals.total_tokens)}</dd>
    </div>
    <div>
      <dt>Cost</dt>
      <dd>{usd(totals.cost_usd)}</dd>
    </div>
    {totals.unpriced_calls > 0
      ? (
        <div>
          <dt>Calls without a price</dt>
          <dd>{totals.unpriced_calls}</dd>
        </div>
      )
      : null}
  </dl>
)

/** Tokens (prompt and completion stacked) and cost per row; the table is their text alternative. */
const UsageCharts = ({ rows, by }: { readonly rows: ReadonlyArray<UsageRow>; readonly by: string }) => {
  const labels = useMemo(() => rows.map((row) => row.label), [rows])
  const tokenSeries = useMemo<ReadonlyArray<BarSeries>>(
    () => [
      { label: "Prompt tokens", values: rows.map((row) => row.prompt_tokens), colour: colours.prompt },
      { label: "Completion tokens", values: rows.map((row) => row.completion_tokens), colour: colours.completion }
    ],
    [rows]
  )
  const costSeries = useMemo<ReadonlyArray<BarSeries>>(
    () => [{ label: "Cost (USD)", values: rows.map((row) => row.cost_usd), colour: colours.cost }],
    [rows]
  )
  return (
    <div className="grid-2 charts" hidden={rows.length === 0}>
      <Section title={`Tokens by ${by}`}>
        <BarChart
          label={`Tokens by ${by}, prompt and completion stacked`}
          labels={labels}
          series={tokenSeries}
          stacked
          describedBy="usage-table"
          format={tokens}
        />
      </Section>
      <Section title={`Cost by ${by}`}>
        <BarChart label={`Cost in US dollars by ${by}`} labels={labels} series={costSeries} describedBy="usage-table" format={usd} />
      </Section>
    </div>
  )
}

const UsageTable = ({ rows, groupLabel }: { readonly rows: ReadonlyArray<UsageRow>; readonly groupLabel: string }) => (
  <Section title="Table">
    <div {...scrollRegion}>
      <table className="data" id="usage-table" aria-label={`Usage by ${groupLabel.toLowerCase()}`}>
        <thead>
          <tr>
            <th>{groupLabel}</th>
            <th className="num">Calls</th>
            <th className="num">Prompt tokens</th>
            <th className="num">Completion tokens</th>
            <th className="num">Total tokens</th>
            <th className="num">Cost</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.label}</th>
              <td className="num">{row.calls}{row.errors > 0 ? ` (${row.errors} failed)` : ""}</td>
              <td className="num">{tokens(row.prompt_tokens)}</td>
              <td className="num">{tokens(row.completion_tokens)}</td>
              <td className="num">{tokens(row.total_tokens)}</td>
              <td className="num">{usd(row.cost_usd)}{row.unpriced_calls > 0 ? " *" : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
    {rows.some((row) => row.unpriced_calls > 0)
      ? <p className="muted">* Some calls have no known price and add nothing to the cost.</p>
      : null}
  </Section>
)

/**
 * The report for a range of UTC days (none while the range is backwards) and its rows for a
 * grouping, keys named when the user may list them.
 */
const useUsageReport = (auth: PageProps["auth"], from: string, to: string, grouping: Grouping) => {
  const validRange = from !== "" && to !== "" && from <= to
  const report = useLoad(
    () => (validRange
      ? auth.call((client) => client.usage.report({ urlParams: { from: startOf(from), to: dayAfter(to) } }))
      : Promise.resolve(undefined)),
    [auth, from, to, validRange]
  )
  // Key names for the "by key" grouping, when the user may list keys (ids otherwise).
  const keys = useLoad(
    () => (allows(auth, ["apiKeys", "list"])
      ? auth.call((client) => client.apiKeys.list()).then((list) => list.keys)
      : Promise.resolve([])),
    [auth]
  )
  const keyNames = useMemo(() => new Map((keys.data ?? []).map((key) => [key.id, key.name])), [keys.data])
  const rows = useMemo(() => (report.data ? rowsOf(report.data, grouping, keyNames) : []), [report.data, grouping, keyNames])
  return { report, rows, validRange }
}

const UsagePage = ({ auth }: PageProps) => {
  const [from, setFrom] = useState(() => utcDay(-29))
  const [to, setTo] = useState(() => utcDay(0))
  const [grouping, setGrouping] = useState<Grouping>("day")
  const { report, rows, validRange } = useUsageReport(auth, from, to, grouping)
  const groupLabel = groupings.find((g) => g.id === grouping)!.label

  return (
    <Page title="Usage" loading={report.loading} error={validRange ? report.error : "The range must start on or before its end."}>
      <div className="row usage-controls">
        <TextField label="From" type="date" value={from} onChange={setFrom} />
        <TextField label="To" type="date" value={to} onChange={setTo} />
        <Select
          label="Group by"
          value={grouping}
          onChange={(value) => setGrouping(value as Grouping)}
          options={groupings.map((g) => ({ value: g.id, label: g.label }))}
        />
      </div>
      <p className="muted">Days are UTC; the range includes both ends.</p>
      {report.data?.totals ? <TotalsList totals={report.data.totals} /> : null}
      <BudgetBars auth={auth} />
      {report.data && rows.length === 0 ? <p className="empty" role="status">No usage in this range.</p> : null}
      <UsageCharts rows={rows} by={groupLabel.toLowerCase()} />
      {rows.length > 0 ? <UsageTable rows={rows} groupLabel={groupLabel} /> : null}
    </Page>
  )
}

export default UsagePage
