/** An integration's status as the console shows it: one word, a badge colour, and why. */
import type { IntegrationSummary } from "../../../integrations/Api.ts"

type Status = IntegrationSummary["status"]

const labels: Record<Status, string> = { ready: "Ready", partial: "Partial", not_configured: "Not configured", failed: "Failed" }
const badges: Record<Status, "ok" | "warn" | "bad" | "off"> = { ready: "ok", partial: "warn", not_configured: "off", failed: "bad" }

export const statusLabel = (status: Status) => labels[status]
export const statusBadge = (status: Status) => badges[status]

/** Why it is not ready: the load error, or the required settings still missing. */
export const statusReason = (integration: Pick<IntegrationSummary, "status" | "error" | "missing_settings">): string | null => {
  if (integration.status === "failed") return integration.error ?? "It failed to load; see the server log."
  if (integration.missing_settings.length > 0) return `Missing required settings: ${integration.missing_settings.join(", ")}`
  return null
}
