/** The usage report's breakdowns as rows of one shape, each with the label a chart and table show. */
import type { UsageReport } from "../../../usage/Model.ts"

export const groupings = [
  { id: "day", label: "Day" },
  { id: "model", label: "Model" },
  { id: "bot", label: "Bot" },
  { id: "key", label: "Key" }
] as const

export type Grouping = (typeof groupings)[number]["id"]

export interface UsageRow {
  readonly key: string
  readonly label: string
  readonly calls: number
  readonly errors: number
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
  readonly cost_usd: number
  readonly unpriced_calls: number
}

const callerKinds: Record<string, string> = {
  scoped_key: "API key",
  user: "user",
  static_key: "server key",
  widget: "widget",
  integration: "integration"
}

/** Who a `by_key` row is: an API key by its name when known, a user, the server's static key… */
const callerLabel = (kind: string | null, id: string | null, keyNames: ReadonlyMap<string, string>) => {
  if (kind === null) return "background work"
  const what = callerKinds[kind] ?? kind
  if (!id) return what
  return `${what}: ${keyNames.get(id) ?? id}`
}

export const rowsOf = (report: UsageReport, grouping: Grouping, keyNames: ReadonlyMap<string, string>): ReadonlyArray<UsageRow> => {
  switch (grouping) {
    case "day":
      return [...report.by_day].sort((a, b) => a.day.localeCompare(b.day)).map((row) => ({ ...row, key: row.day, label: row.day }))
    case "model":
      return report.by_model.map((row) => ({ ...row, key: `${row.provider_id}/${row.model}`, label: `${row.provider_id}/${row.model}` }))
    case "bot":
      return report.by_bot.map((row) => ({ ...row, key: row.bot_id ?? "", label: row.bot_id ?? "no bot" }))
    case "key":
      return report.by_key.map((row) => ({
        ...row,
        key: `${row.principal_kind ?? ""}:${row.principal_id ?? ""}`,
        label: callerLabel(row.principal_kind, row.principal_id, keyNames)
      }))
  }
}
