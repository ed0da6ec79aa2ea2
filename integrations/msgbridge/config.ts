/** The bridge's settings, read once per use from `cairn.settings.all()`; types and defaults are SETUP's. */
import { readSettings } from "../../src/sdk/index.ts"
import { behaviourSettings } from "./setup.ts"

export type SendMethod = "apple-script" | "private-api"

export interface BridgeConfig {
  readonly serverUrl: string | undefined
  readonly password: string | undefined
  readonly webhookToken: string | undefined
  readonly wakeWords: ReadonlyArray<string>
  readonly defaultBot: string
  readonly sendMethod: SendMethod
  readonly echoWindowMs: number
  readonly staleMs: number
  readonly catchUpMaxAgeMs: number
  readonly replyLimit: number
  readonly replyWindowMs: number
  readonly maxMessageChars: number
  readonly sendTimeoutMs: number
  readonly healthIntervalMs: number
  readonly legacyClient: boolean
}

const connectionValue = (settings: Readonly<Record<string, string | undefined>>, key: string) => settings[key]?.trim() || undefined

/** The bridge's settings; the behaviour ones typed by their SETUP schema (a wrong one throws, naming it). */
export const readConfig = (settings: Readonly<Record<string, string | undefined>>): BridgeConfig => {
  const read = readSettings({ env_vars: behaviourSettings }, settings)
  // Only the environment can hold a wrong one: a saved value was checked when it was saved.
  if (!read.ok) throw new Error(`Messaging bridge settings: ${read.error}`)
  const values = read.values
  return {
    serverUrl: connectionValue(settings, "MSGBRIDGE_SERVER_URL")?.replace(/\/+$/, ""),
    password: settings.MSGBRIDGE_PASSWORD || undefined,
    webhookToken: settings.MSGBRIDGE_WEBHOOK_TOKEN || undefined,
    wakeWords: values.MSGBRIDGE_WAKE_WORDS ?? [],
    defaultBot: values.MSGBRIDGE_DEFAULT_BOT,
    sendMethod: values.MSGBRIDGE_SEND_METHOD,
    echoWindowMs: values.MSGBRIDGE_ECHO_WINDOW_SECONDS * 1000,
    staleMs: values.MSGBRIDGE_STALE_SECONDS * 1000,
    catchUpMaxAgeMs: values.MSGBRIDGE_CATCHUP_MAX_AGE_HOURS * 3_600_000,
    replyLimit: values.MSGBRIDGE_REPLY_LIMIT,
    replyWindowMs: values.MSGBRIDGE_REPLY_WINDOW_SECONDS * 1000,
    maxMessageChars: values.MSGBRIDGE_MAX_MESSAGE_CHARS,
    sendTimeoutMs: values.MSGBRIDGE_SEND_TIMEOUT_MS,
    healthIntervalMs: values.MSGBRIDGE_HEALTH_INTERVAL_SECONDS * 1000,
    legacyClient: values.MSGBRIDGE_LEGACY_CLIENT
  }
}
