/** The mailbox settings, read and checked once per poll (stored, then environment, then default). */
import * as fs from "node:fs"
import { type RiskLevel, riskLevels } from "./screening/checks.ts"

export interface MailboxConfig {
  readonly email: string
  readonly password: string
  readonly user: string
  readonly host: string
  readonly port: number
  readonly security: "tls" | "starttls" | "plain"
  readonly ca: string | undefined
  readonly folders: ReadonlyArray<string>
  readonly pollIntervalMs: number
  readonly maxPerPoll: number
  readonly initialFetch: { readonly mode: "new" | "all" } | { readonly mode: "recent"; readonly count: number }
  readonly quarantineLevel: RiskLevel
  readonly classifier: {
    readonly model: string | undefined
    readonly timeoutMs: number
    readonly retryMs: number
    readonly retries: number
  }
  readonly startDelayMs: number
}

const positive = (value: string | undefined, fallback: number) => {
  const n = Number(value)
  return Number.isFinite(n) && n > 0 ? n : fallback
}

/** The configuration, or why it cannot be used (a message for the status and the log). */
export const readConfig = (
  settings: Readonly<Record<string, string | undefined>>
): { readonly ok: true; readonly config: MailboxConfig } | { readonly ok: false; readonly error: string } => {
  const email = settings.MAILBOX_EMAIL?.trim()
  const password = settings.MAILBOX_APP_PASSWORD
  if (!email || !password) return { ok: false, error: "MAILBOX_EMAIL and MAILBOX_APP_PASSWORD are not both set" }
  const security = (settings.MAILBOX_IMAP_SECURITY ?? "tls").toLowerCase()
  if (security !== "tls" && security !== "starttls" && security !== "plain") {
    return { ok: false, error: `MAILBOX_IMAP_SECURITY must be tls, starttls or plain, not ${security}` }
  }
  let ca: string | undefined
  if (settings.MAILBOX_IMAP_CA_FILE) {
    try {
      ca = fs.readFileSync(settings.MAILBOX_IMAP_CA_FILE, "utf8")
    } catch (error) {
      return { ok: false, error: `MAILBOX_IMAP_CA_FILE cannot be read: ${error instanceof Error ? error.message : String(error)}` }
    }
  }
  const initial = (settings.MAILBOX_INITIAL_FETCH ?? "new").trim().toLowerCase()
  const recent = /^recent:(\d+)$/.exec(initial)
  if (initial !== "new" && initial !== "all" && !recent) {
    return { ok: false, error: `MAILBOX_INITIAL_FETCH must be new, all or recent:N, not ${initial}` }
  }
  const level = (settings.MAILBOX_PATTERN_QUARANTINE_LEVEL ?? "high").toLowerCase() as RiskLevel
  if (!riskLevels.includes(level) || level === "none") {
    return { ok: false, error: `MAILBOX_PATTERN_QUARANTINE_LEVEL must be low, medium or high, not ${level}` }
  }
  return {
    ok: true,
    config: {
      email,
      password,
      user: settings.MAILBOX_IMAP_USER?.trim() || email,
      host: settings.MAILBOX_IMAP_HOST ?? "imap.gmail.com",
      port: positive(settings.MAILBOX_IMAP_PORT, 993),
      security,
      ca,
      folders: (settings.MAILBOX_FOLDERS ?? "INBOX").split(",").map((f) => f.trim()).filter(Boolean),
      pollIntervalMs: positive(settings.MAILBOX_POLL_INTERVAL, 60) * 1000,
      maxPerPoll: Math.floor(positive(settings.MAILBOX_MAX_PER_POLL, 25)),
      initialFetch: recent ? { mode: "recent", count: Number(recent[1]) } : { mode: initial as "new" | "all" },
      quarantineLevel: level,
      classifier: {
        model: settings.INGESTION_CLASSIFIER_MODEL || undefined,
        timeoutMs: positive(settings.MAILBOX_CLASSIFIER_TIMEOUT_MS, 30_000),
        retryMs: positive(settings.MAILBOX_CLASSIFIER_RETRY_MS, 2000),
        retries: 3
      },
      startDelayMs: Number(settings.MAILBOX_START_DELAY_MS ?? 5000) >= 0 ? Number(settings.MAILBOX_START_DELAY_MS ?? 5000) : 5000
    }
  }
}
