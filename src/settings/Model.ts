/** The server settings that can change at runtime, each with its schema, source and default. */
import { Either, ParseResult, Schema } from "effect"
import type { AppConfigShape } from "../config/AppConfig.ts"
import { parseRate } from "../config/Rate.ts"

/**
 * One runtime setting, declared once: its key, the schema a stored or sent value must decode with
 * (the decoded value is what is stored and read), and its value when nothing is stored.
 */
export interface SettingDefinition<A> {
  readonly key: string
  readonly description: string
  /** What kind of value it takes, for a form: an on/off switch, a rate, a whole number, a list. */
  readonly type: SettingType
  readonly schema: Schema.Schema<A, any>
  /** The value when nothing is stored: from the environment (already parsed) or the default. */
  readonly fromConfig: (config: AppConfigShape) => A
}

export const SettingType = Schema.Literal("boolean", "rate", "integer", "list")
export type SettingType = typeof SettingType.Type

const setting = <A>(definition: SettingDefinition<A>) => definition

const Flag = Schema.declare((value: unknown): value is boolean => typeof value === "boolean", {
  message: () => "Expected a boolean"
})

/** A rate expression, normalised (`100/minute`); the message says what is wrong with a bad one. */
const RateText = Schema.transformOrFail(Schema.Unknown, Schema.String, {
  strict: true,
  decode: (value, _, ast) =>
    typeof value !== "string"
      ? ParseResult.fail(new ParseResult.Type(ast, value, "Expected a rate like \"100/minute\""))
      : Either.match(parseRate(value), {
        onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, value, message)),
        onRight: (parsed) => ParseResult.succeed(parsed.text)
      }),
  encode: ParseResult.succeed
})

export const RateLimitEnabled = setting({
  key: "RATE_LIMIT_ENABLED",
  description: "Whether inbound API calls are rate-limited",
  type: "boolean",
  schema: Flag,
  fromConfig: (config) => config.rateLimitEnabled
})
export const RateLimitDefault = setting({
  key: "RATE_LIMIT_DEFAULT",
  description: "Limit on every API route per key (or client IP), as <n>/minute",
  type: "rate",
  schema: RateText,
  fromConfig: (config) => config.rateLimitDefault.text
})
export const RateLimitChat = setting({
  key: "RATE_LIMIT_CHAT",
  description: "Additional, stricter limit on /chat and /chat/stream",
  type: "rate",
  schema: RateText,
  fromConfig: (config) => config.rateLimitChat.text
})
export const SystemPaused = setting({
  key: "SYSTEM_PAUSED",
  description: "When true, new agent runs are queued with reason system_paused",
  type: "boolean",
  schema: Flag,
  fromConfig: () => false
})

/** The largest value of PostgreSQL's `int` (and of a timer in milliseconds). */
const INT_MAX = 2_147_483_647

/**
 * A whole number from `min` to `max`. The upper bound matters: `1e308` is an integer to
 * `Number.isInteger`, and a setting that large reached SQL as `1e+308` (BACKUP_RETENTION's
 * `OFFSET`, refused as a bigint, so every backup failed) or a Date as NaN (LOG_RETENTION_DAYS'
 * cutoff, so pruning failed on every pass). The default bound is PostgreSQL's `int`.
 */
const WholeNumber = (min: number, max = INT_MAX, unit = "") =>
  Schema.Number.pipe(
    Schema.filter((n) => (Number.isInteger(n) && n >= min && n <= max) || `Expected a whole number${unit} from ${min} to ${max}`)
  )

const PositiveInt = WholeNumber(1)

export const AttachmentMaxBytes = setting({
  key: "ATTACHMENT_MAX_BYTES",
  description: "Largest image attachment a chat message may carry, in bytes of the decoded file (422 past it)",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.attachmentMaxBytes
})
export const AttachmentMaxCount = setting({
  key: "ATTACHMENT_MAX_COUNT",
  description: "Most image attachments one chat message may carry (422 past it)",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.attachmentMaxCount
})

export const LogRetentionDays = setting({
  key: "LOG_RETENTION_DAYS",
  description: "Days the agent's trace spans (turn logs, tool-call audit, traces) are kept",
  // A century: the cutoff (now less the days) stays a date PostgreSQL stores.
  type: "integer",
  schema: WholeNumber(1, 36_500, " of days"),
  fromConfig: (config) => config.logRetentionDays
})

export const UploadMaxBytes = setting({
  key: "UPLOAD_MAX_BYTES",
  description:
    "Largest file POST /api/v1/attachments/upload takes, in bytes (413 past it); a JSON body that carries files (chat messages with inline images, documents, workspace files) may be this much in base64",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.uploadMaxBytes
})

export const RequestMaxBytes = setting({
  key: "REQUEST_MAX_BYTES",
  description:
    "Largest request body a route takes unless it carries files (UPLOAD_MAX_BYTES) or audio (TRANSCRIBE_MAX_BYTES), in bytes; 413 past it, before the body is read",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.requestMaxBytes
})

export const ChatMessageMaxChars = setting({
  key: "CHAT_MESSAGE_MAX_CHARS",
  description: "Longest chat message text, in characters (422 past it), on /chat, /chat/stream and /v1/chat/completions (its last message)",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.chatMessageMaxChars
})

const MediaTypePattern = Schema.String.pipe(
  Schema.filter((text) => /^[a-z]+\/(?:[a-z0-9][a-z0-9.+-]*|\*)$/.test(text) || "Expected a media type like image/png or image/*")
)

export const UploadAllowedTypes = setting({
  key: "UPLOAD_ALLOWED_TYPES",
  description:
    "Types an upload may be, as sniffed from its bytes (image/png, image/*, application/pdf, text/plain, audio/*, ...); empty: every type Cairn recognises (415 otherwise)",
  type: "list",
  schema: Schema.Array(MediaTypePattern),
  fromConfig: (config) => config.uploadAllowedTypes
})

export const BackupRetention = setting({
  key: "BACKUP_RETENTION",
  description: "Backup archives kept: after each backup, older ones are deleted (their history stays, marked expired)",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.backupRetention
})

export const BackupIntervalHours = setting({
  key: "BACKUP_INTERVAL_HOURS",
  description: "Hours between scheduled backups (0: none); one process makes each",
  type: "integer",
  schema: WholeNumber(0, INT_MAX, " of hours (0 for none)"),
  fromConfig: (config) => config.backupIntervalHours
})

export const RunsPerCredentialMax = setting({
  key: "RUNS_PER_CREDENTIAL_MAX",
  description:
    "Most runs one credential (API key, user, widget identity, the static key) may have running at once through /chat, /chat/stream, /v1/chat/completions and MCP's chat_with_bot; past it 429 with Retry-After (queued tasks are not counted)",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.runsPerCredentialMax
})

export const ProviderConcurrencyMax = setting({
  key: "PROVIDER_CONCURRENCY_MAX",
  description:
    "Most model calls in flight to one provider; past it calls wait, served in turn across callers (round-robin per credential), not first come first served",
  type: "integer",
  schema: PositiveInt,
  fromConfig: (config) => config.providerConcurrencyMax
})

export const BudgetEmbeddings = setting({
  key: "BUDGET_EMBEDDINGS",
  description:
    "When true, embedding calls (document ingest and search) check and reserve the budgets that apply to them, as chat calls do; off, they are recorded but never refused",
  type: "boolean",
  schema: Flag,
  fromConfig: () => false
})

export const WidgetStopOnDisconnect = setting({
  key: "WIDGET_STOP_ON_DISCONNECT",
  description: "When true, a run a widget token started on /chat/stream is cancelled when that stream's client disconnects",
  type: "boolean",
  schema: Flag,
  fromConfig: (config) => config.widgetStopOnDisconnect
})

export const MemorySoftLimitMb = setting({
  key: "MEMORY_SOFT_LIMIT_MB",
  description:
    "Resident memory in MB above which new runs are refused with 503 and Retry-After (open streams finish, queued tasks wait) and /health/ready says shedding; 0: 80 % of the container's or machine's memory limit",
  type: "integer",
  schema: WholeNumber(0, INT_MAX, " of MB (0: 80 % of the memory limit)"),
  fromConfig: (config) => config.memorySoftLimitMb
})

export const MemoryHardLimitMb = setting({
  key: "MEMORY_HARD_LIMIT_MB",
  description:
    "Resident memory in MB above which the server drains and restarts through its supervisor (systemd, pm2, SUPERVISED=true; without one it only sheds); 0: 90 % of the memory limit",
  type: "integer",
  schema: WholeNumber(0, INT_MAX, " of MB (0: 90 % of the memory limit)"),
  fromConfig: (config) => config.memoryHardLimitMb
})

/** Every runtime setting (a list of different value types; typed reads go through the constants above). */
export const settingDefinitions: ReadonlyArray<SettingDefinition<any>> = [
  RateLimitEnabled,
  RateLimitDefault,
  RateLimitChat,
  SystemPaused,
  AttachmentMaxBytes,
  AttachmentMaxCount,
  LogRetentionDays,
  UploadMaxBytes,
  RequestMaxBytes,
  ChatMessageMaxChars,
  UploadAllowedTypes,
  BackupRetention,
  BackupIntervalHours,
  RunsPerCredentialMax,
  ProviderConcurrencyMax,
  BudgetEmbeddings,
  WidgetStopOnDisconnect,
  MemorySoftLimitMb,
  MemoryHardLimitMb
]

/** Checks a candidate value against its setting's schema: the normalised value, or a message. */
export const validateSetting = <A>(definition: SettingDefinition<A>, value: unknown): Either.Either<A, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(definition.schema)(value), (error) => ParseResult.TreeFormatter.formatErrorSync(error))

export const definitionsByKey: ReadonlyMap<string, SettingDefinition<any>> = new Map(
  settingDefinitions.map((definition) => [definition.key, definition])
)

export const SettingSource = Schema.Literal("stored", "environment")

export class SettingView extends Schema.Class<SettingView>("SettingView")({
  key: Schema.String,
  value: Schema.Unknown,
  source: SettingSource,
  description: Schema.String,
  type: SettingType,
  /** The value when nothing is stored (the environment's, else the built-in default): what a reset restores. */
  default: Schema.Unknown
}) {}

export class SettingsList extends Schema.Class<SettingsList>("SettingsList")({
  settings: Schema.Array(SettingView)
}) {}
