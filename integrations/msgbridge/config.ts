/** The bridge's settings, read once per use from `cairn.settings.all()`. */

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

const positive = (value: string | undefined, fallback: number) => {
  const n = Number(value)
  return Number.isFinite(n) && n > 0 ? n : fallback
}

export const wordsOf = (value: string | undefined): Array<string> =>
  (value ?? "")
    .split(",")
    .map((word) => word.trim())
    .filter(Boolean)

export const readConfig = (settings: Readonly<Record<string, string | undefined>>): BridgeConfig => ({
  serverUrl: settings.MSGBRIDGE_SERVER_URL?.trim().replace(/\/+$/, "") || undefined,
  password: settings.MSGBRIDGE_PASSWORD || undefined,
  webhookToken: settings.MSGBRIDGE_WEBHOOK_TOKEN || undefined,
  wakeWords: wordsOf(settings.MSGBRIDGE_WAKE_WORDS),
  defaultBot: settings.MSGBRIDGE_DEFAULT_BOT?.trim() || "default",
  sendMethod: settings.MSGBRIDGE_SEND_METHOD === "private-api" ? "private-api" : "apple-script",
  echoWindowMs: positive(settings.MSGBRIDGE_ECHO_WINDOW_SECONDS, 30) * 1000,
  staleMs: positive(settings.MSGBRIDGE_STALE_SECONDS, 300) * 1000,
  catchUpMaxAgeMs: positive(settings.MSGBRIDGE_CATCHUP_MAX_AGE_HOURS, 24) * 3_600_000,
  replyLimit: Math.floor(positive(settings.MSGBRIDGE_REPLY_LIMIT, 10)),
  replyWindowMs: positive(settings.MSGBRIDGE_REPLY_WINDOW_SECONDS, 60) * 1000,
  maxMessageChars: Math.max(100, Math.floor(positive(settings.MSGBRIDGE_MAX_MESSAGE_CHARS, 2000))),
  sendTimeoutMs: positive(settings.MSGBRIDGE_SEND_TIMEOUT_MS, 30_000),
  healthIntervalMs: positive(settings.MSGBRIDGE_HEALTH_INTERVAL_SECONDS, 30) * 1000,
  legacyClient: (settings.MSGBRIDGE_LEGACY_CLIENT ?? "true").toLowerCase() !== "false"
})
