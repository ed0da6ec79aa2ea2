/**
 * An integration's honest status, read from its workers' own last real contact (the mailbox's last
 * IMAP login, the bridge's last ping), not from its settings alone: `not configured`, `connecting`,
 * `connected`, `failing: <reason>, since <when>` or `paused`. The same words reach the console's
 * dots, `/api/v1/admin/integrations`, `cairn status` and the HUD. Pure functions.
 */
import type { WorkerStatus } from "./Workers.ts"

export type HealthState = "not_configured" | "connecting" | "connected" | "failing" | "paused"

export interface Health {
  readonly state: HealthState
  /** Why it is failing, not configured or paused; null when connected or connecting. */
  readonly reason: string | null
  /** When the failures it is in began (ISO 8601); null unless failing. */
  readonly since: string | null
  /** Its workers' last contact, successful or not (ISO 8601), or null. */
  readonly last_contact_at: string | null
  /** The state in words, as every surface shows it: `failing: <reason>, since <when>`. */
  readonly words: string
}

type Finding = Omit<Health, "words" | "last_contact_at">

/** Worst first: an integration shows its worst worker. */
const rank: Record<HealthState, number> = { failing: 4, not_configured: 3, connecting: 2, paused: 1, connected: 0 }

/** `2026-11-29T09:01:02.345Z` as `2026-11-29 09:01:02 UTC`. */
export const shortTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`

export const healthWords = (finding: Finding): string => {
  const word = finding.state.replace("_", " ")
  if (finding.state === "failing") {
    return `failing: ${finding.reason ?? "unknown error"}${finding.since ? `, since ${shortTime(finding.since)}` : ""}`
  }
  if (finding.state === "connected" || finding.state === "connecting" || !finding.reason) return word
  return `${word}: ${finding.reason}`
}

const workerHealth = (worker: WorkerStatus): Finding => {
  const failingReason = worker.contact?.state === "failing" ? worker.contact.reason : worker.last_error?.message
  switch (worker.state) {
    case "waiting_for_settings":
      return { state: "not_configured", reason: `needs ${worker.missing_settings.join(", ")}`, since: null }
    case "backing_off":
      return { state: "failing", reason: failingReason ?? null, since: worker.failing_since }
    case "leader_elsewhere":
      return { state: "paused", reason: `${worker.name} runs in another server process`, since: null }
    case "finished":
      return { state: "paused", reason: `${worker.name} finished; it starts again when the settings change`, since: null }
    case "stopped":
      return { state: "paused", reason: `${worker.name} stopped`, since: null }
    case "starting":
    case "running": {
      // A restart after a failure is still failing until a contact succeeds.
      if (worker.failing_since !== null && (worker.connects || worker.state === "starting")) {
        return { state: "failing", reason: failingReason ?? null, since: worker.failing_since }
      }
      if (worker.contact?.state === "paused") return { state: "paused", reason: worker.contact.reason, since: null }
      if (worker.contact?.state === "connected") return { state: "connected", reason: null, since: null }
      return { state: worker.state === "running" && !worker.connects ? "connected" : "connecting", reason: null, since: null }
    }
  }
}

const withWords = (finding: Finding, lastContact: string | null): Health => ({
  ...finding,
  last_contact_at: lastContact,
  words: healthWords(finding)
})

/**
 * An integration's status: failing when it did not load, not configured while a required setting is
 * missing, else its worst worker's; one without workers makes no contact of its own and is
 * connected once configured.
 */
export const integrationHealth = (input: {
  readonly loadError: string | null
  readonly missingSettings: ReadonlyArray<string>
  readonly workers: ReadonlyArray<WorkerStatus>
}): Health => {
  const contacts = input.workers.flatMap((worker) => (worker.contact ? [worker.contact.at] : [])).sort()
  const lastContact = contacts.at(-1) ?? null
  if (input.loadError !== null) return withWords({ state: "failing", reason: input.loadError, since: null }, lastContact)
  if (input.missingSettings.length > 0) {
    return withWords({ state: "not_configured", reason: `missing ${input.missingSettings.join(", ")}`, since: null }, lastContact)
  }
  const findings = input.workers.map(workerHealth)
  const worst = findings.reduce<Finding>(
    (acc, finding) => (rank[finding.state] > rank[acc.state] ? finding : acc),
    { state: "connected", reason: null, since: null }
  )
  return withWords(worst, lastContact)
}
