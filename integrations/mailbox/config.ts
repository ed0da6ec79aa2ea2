/**
 * The mailbox settings, read and checked once per poll (stored, then environment, then default):
 * their types, defaults and which are required are declared once, in SETUP.
 */
import * as fs from "node:fs"
import { readSettings } from "../../src/sdk/index.ts"
import type { RiskLevel } from "./screening/checks.ts"
import { SETUP } from "./setup.ts"

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

/** The configuration, or why it cannot be used (a message for the status and the log). */
export const readConfig = (
  settings: Readonly<Record<string, string | undefined>>
): { readonly ok: true; readonly config: MailboxConfig } | { readonly ok: false; readonly error: string } => {
  const read = readSettings(SETUP, settings)
  if (!read.ok) return read
  const values = read.values
  let ca: string | undefined
  if (values.MAILBOX_IMAP_CA_FILE) {
    try {
      ca = fs.readFileSync(values.MAILBOX_IMAP_CA_FILE, "utf8")
    } catch (error) {
      return { ok: false, error: `MAILBOX_IMAP_CA_FILE cannot be read: ${error instanceof Error ? error.message : String(error)}` }
    }
  }
  return {
    ok: true,
    config: {
      email: values.MAILBOX_EMAIL,
      password: values.MAILBOX_APP_PASSWORD,
      user: values.MAILBOX_IMAP_USER || values.MAILBOX_EMAIL,
      host: values.MAILBOX_IMAP_HOST,
      port: values.MAILBOX_IMAP_PORT,
      security: values.MAILBOX_IMAP_SECURITY,
      ca,
      folders: values.MAILBOX_FOLDERS,
      pollIntervalMs: values.MAILBOX_POLL_INTERVAL * 1000,
      maxPerPoll: values.MAILBOX_MAX_PER_POLL,
      initialFetch: values.MAILBOX_INITIAL_FETCH,
      quarantineLevel: values.MAILBOX_PATTERN_QUARANTINE_LEVEL,
      classifier: {
        model: values.INGESTION_CLASSIFIER_MODEL,
        timeoutMs: values.MAILBOX_CLASSIFIER_TIMEOUT_MS,
        retryMs: values.MAILBOX_CLASSIFIER_RETRY_MS,
        retries: 3
      },
      startDelayMs: values.MAILBOX_START_DELAY_MS
    }
  }
}
