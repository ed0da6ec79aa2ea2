/**
 * An integration's status as the console shows it: the words the API gives (from its own last real
 * contact: not configured, connecting, connected, failing, paused), a badge colour, and why. Not
 * configured and paused are grey: nothing is wrong until someone asks it to work.
 */
import type { IntegrationSummary } from "../../../integrations/Api.ts"

type State = IntegrationSummary["health"]["state"]

const labels: Record<State, string> = {
  not_configured: "Not configured",
  connecting: "Connecting",
  connected: "Connected",
  failing: "Failing",
  paused: "Paused"
}
const badges: Record<State, "ok" | "warn" | "bad" | "off"> = {
  connected: "ok",
  connecting: "warn",
  failing: "bad",
  not_configured: "off",
  paused: "off"
}

export const statusLabel = (health: IntegrationSummary["health"]) => labels[health.state]
export const statusBadge = (health: IntegrationSummary["health"]) => badges[health.state]

/** Why it is not connected: the words after the state (`<reason>, since <when>`), or null. */
export const statusReason = (integration: Pick<IntegrationSummary, "health">): string | null => {
  const { state, words } = integration.health
  const prefix = `${state.replace("_", " ")}: `
  return words.startsWith(prefix) ? words.slice(prefix.length) : null
}
