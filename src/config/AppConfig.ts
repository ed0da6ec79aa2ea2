/**
 * The server's settings, read once at startup through Effect `Config` from the environment (with an
 * optional `.env` file beneath it). An invalid value fails startup with a message naming the key.
 */
import { Config, ConfigError, Context, Either, Layer, Option, Redacted } from "effect"
import { type LogLevelName, logLevels } from "../contract/LogLevels.ts"
import { parseRate, RateExpression } from "./Rate.ts"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  /**
   * A direct connection to PostgreSQL for what a pooler in transaction mode cannot carry: the bus's
   * LISTEN and the leaders' session locks (DATABASE_LISTEN_URL; DATABASE_URL when not set).
   */
  readonly databaseListenUrl: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
  /** The document store's embedding model, and the default of `Llm.embed` (README: EMBEDDING_MODEL). */
  readonly embeddingModel: string
  readonly defaultModel: string
  readonly openaiBaseUrl: string
  readonly openaiApiKey: Option.Option<Redacted.Redacted<string>>
  readonly corsOrigins: ReadonlyArray<string>
  readonly rateLimitEnabled: boolean
  readonly rateLimitDefault: RateExpression
  readonly rateLimitChat: RateExpression
  /** Defaults of the runtime settings ATTACHMENT_MAX_BYTES and ATTACHMENT_MAX_COUNT. */
  readonly attachmentMaxBytes: number
  readonly attachmentMaxCount: number
  /** Defaults of the runtime settings of the same names (logs, uploads, backups). */
  readonly logRetentionDays: number
  readonly uploadMaxBytes: number
  /** Defaults of REQUEST_MAX_BYTES (a request body's limit) and CHAT_MESSAGE_MAX_CHARS. */
  readonly requestMaxBytes: number
  readonly chatMessageMaxChars: number
  /** The largest audio body /transcribe takes (TRANSCRIBE_MAX_BYTES); also that route's body limit. */
  readonly transcribeMaxBytes: number
  readonly uploadAllowedTypes: ReadonlyArray<string>
  readonly backupRetention: number
  readonly backupIntervalHours: number
  /** Defaults of the fairness settings RUNS_PER_CREDENTIAL_MAX, PROVIDER_CONCURRENCY_MAX, WIDGET_STOP_ON_DISCONNECT. */
  readonly runsPerCredentialMax: number
  readonly providerConcurrencyMax: number
  readonly widgetStopOnDisconnect: boolean
  /** Origins whose pages may frame the widget (`/widget/<bot>`'s frame-ancestors); none by default. */
  readonly widgetEmbedOrigins: ReadonlyArray<string>
  /** A widget token's life: 900 s (the spec's 15 minutes) unless set shorter. */
  readonly widgetTokenLifetimeSeconds: number
  /** Where backup archives are written (default DATA_DIR/backups); shared storage for several processes. */
  readonly backupDir: Option.Option<string>
  /**
   * What starts the server again when it exits (POST /admin/operations/restart): systemd
   * (INVOCATION_ID), pm2 (pm_id), "configured" (SUPERVISED=true), or null for none.
   */
  readonly supervisor: string | null
  readonly integrationDirs: ReadonlyArray<string>
  /** Extra directories of bot YAML files, read after the project's bots/. */
  readonly botsDirs: ReadonlyArray<string>
  /**
   * A git working copy of bots (`bots/`), skills (`skills/`) and workflows (`workflows/`), read
   * after the others at start and pulled (fast-forward only) by POST /admin/operations/repository/pull.
   */
  readonly repoDir: Option.Option<string>
  /** A YAML file of MCP servers Cairn connects to (synced at startup, read-only over the API). */
  readonly mcpServersFile: Option.Option<string>
  readonly hookWebhookUrls: ReadonlyArray<string>
  readonly jwtSecret: Option.Option<Redacted.Redacted<string>>
  /** How long a signed-in user's access token lives (ACCESS_TOKEN_SECONDS, default an hour). */
  readonly accessTokenSeconds: number
  /** OpenID Connect login: the provider's issuer URL, the client registered there, and our callback. */
  readonly oidcIssuer: Option.Option<string>
  readonly oidcClientId: Option.Option<string>
  readonly oidcClientSecret: Option.Option<Redacted.Redacted<string>>
  readonly oidcRedirectUri: Option.Option<string>
  readonly logLevel: LogLevelName
  readonly otlpEndpoint: Option.Option<string>
  /** How long in-flight requests may run after a shutdown signal before connections are cut. */
  readonly shutdownGraceMs: number
  /** How long startup keeps retrying an unreachable PostgreSQL before it gives up. */
  readonly databaseConnectRetrySeconds: number
  /**
   * Whether a turn's statements are prepared on each PostgreSQL connection (db/Database.ts). Off
   * for a pooler in transaction mode that does not keep prepared statements (older PgBouncer).
   */
  readonly databasePreparedStatements: boolean
  /** PGlite's page cache (PostgreSQL's shared_buffers) in MB: most of the embedded database's memory. */
  readonly pgliteSharedBuffersMb: number
  /** Which of V8's WebAssembly compilers runs PGlite (db/PgliteClient.ts weighs the two). */
  readonly pgliteWasmTier: PgliteWasmTier
  /** One full collection when the server goes quiet after work, so a burst's memory goes back (lifecycle/QuietCollection.ts). */
  readonly quietCollection: boolean
  /** Defaults of the runtime settings MEMORY_SOFT_LIMIT_MB and MEMORY_HARD_LIMIT_MB (0: a share of the memory limit, health/Memory.ts). */
  readonly memorySoftLimitMb: number
  readonly memoryHardLimitMb: number
  /** How often the server reads its own memory (MEMORY_SAMPLE_MS). */
  readonly memorySampleMs: number
  /** How long a stopping server answers not ready before it drains, for a balancer to notice (DRAIN_DELAY_MS). */
  readonly drainDelayMs: number
  /** A port of its own for Prometheus's `/metrics`, without a credential (METRICS_PORT); none by default. */
  readonly metricsPort: Option.Option<number>
}

export const pgliteWasmTiers = ["baseline", "optimizing"] as const
export type PgliteWasmTier = (typeof pgliteWasmTiers)[number]

export class AppConfig extends Context.Tag("cairn/AppConfig")<AppConfig, AppConfigShape>() {}

const commaList = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((raw) =>
      raw
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item.length > 0)
    )
  )

const rate = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((raw) => Either.mapLeft(parseRate(raw), (message) => ConfigError.InvalidData([name], message)))
  )

/** A check whose failure names its key (`Config.validate` after a default loses the key's name). */
const namedCheck = <A>(name: string, message: string, valid: (value: A) => boolean) => (config: Config.Config<A>) =>
  Config.mapOrFail(config, (value) => (valid(value) ? Either.right(value) : Either.left(ConfigError.InvalidData([name], message))))

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: "Expected a positive integer", validation: (n) => n > 0 })
  )

/** The spec's life of a widget token (15 minutes); WIDGET_TOKEN_LIFETIME_SECONDS may only shorten it. */
export const widgetTokenMaxSeconds = 15 * 60

const isHttpUrl = (value: string) => /^https?:\/\/[^\s]+$/.test(value)

const httpUrl = (name: string) => Config.string(name).pipe(Config.validate({ message: "Expected an http(s) URL", validation: isHttpUrl }))

/** The whole configuration as one `Config`, so every key is checked and named on failure. */
export const appConfig: Config.Config<AppConfigShape> = Config.all({
  port: Config.integer("PORT").pipe(
    Config.withDefault(8000),
    // 0 binds any free port (tests, embedding).
    Config.validate({ message: "Expected a port number from 0 to 65535", validation: (n) => n >= 0 && n <= 65535 })
  ),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  apiKey: Config.option(Config.redacted("API_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).length > 0))
  ),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")).pipe(
    Config.map(Option.filter((url) => Redacted.value(url).length > 0)),
    Config.validate({
      message: "Expected a postgres:// or postgresql:// URL",
      validation: Option.match({
        onNone: () => true,
        onSome: (url) => /^postgres(ql)?:\/\//.test(Redacted.value(url))
      })
    })
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  embeddingModel: Config.string("EMBEDDING_MODEL").pipe(
    Config.withDefault("builtin/glove-100d"),
    Config.validate({ message: "Expected \"provider/model\" or a model id", validation: (value) => /^[^\s/]+(\/[^\s]+)?$/.test(value) })
  ),
  defaultModel: Config.string("DEFAULT_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
  openaiBaseUrl: httpUrl("OPENAI_BASE_URL").pipe(Config.withDefault("https://api.openai.com/v1")),
  openaiApiKey: Config.option(Config.redacted("OPENAI_API_KEY")),
  corsOrigins: commaList("CORS_ORIGINS"),
  rateLimitEnabled: Config.boolean("RATE_LIMIT_ENABLED").pipe(Config.withDefault(false)),
  rateLimitDefault: rate("RATE_LIMIT_DEFAULT", "100/minute"),
  rateLimitChat: rate("RATE_LIMIT_CHAT", "30/minute"),
  attachmentMaxBytes: positiveInt("ATTACHMENT_MAX_BYTES", 10 * 1024 * 1024),
  attachmentMaxCount: positiveInt("ATTACHMENT_MAX_COUNT", 8),
  logRetentionDays: positiveInt("LOG_RETENTION_DAYS", 30),
  uploadMaxBytes: positiveInt("UPLOAD_MAX_BYTES", 25 * 1024 * 1024),
  requestMaxBytes: positiveInt("REQUEST_MAX_BYTES", 1024 * 1024),
  chatMessageMaxChars: positiveInt("CHAT_MESSAGE_MAX_CHARS", 100_000),
  transcribeMaxBytes: positiveInt("TRANSCRIBE_MAX_BYTES", 25 * 1024 * 1024),
  uploadAllowedTypes: commaList("UPLOAD_ALLOWED_TYPES"),
  backupRetention: positiveInt("BACKUP_RETENTION", 7),
  runsPerCredentialMax: positiveInt("RUNS_PER_CREDENTIAL_MAX", 16),
  providerConcurrencyMax: positiveInt("PROVIDER_CONCURRENCY_MAX", 256),
  widgetStopOnDisconnect: Config.boolean("WIDGET_STOP_ON_DISCONNECT").pipe(Config.withDefault(false)),
  widgetEmbedOrigins: commaList("WIDGET_EMBED_ORIGINS").pipe(
    // An origin only: a path or a wildcard would not mean what it seems in frame-ancestors.
    namedCheck(
      "WIDGET_EMBED_ORIGINS",
      "Expected a comma-separated list of origins (https://example.com, http://127.0.0.1:8080)",
      (origins) => origins.every((origin) => /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i.test(origin))
    )
  ),
  widgetTokenLifetimeSeconds: Config.integer("WIDGET_TOKEN_LIFETIME_SECONDS").pipe(
    Config.withDefault(widgetTokenMaxSeconds),
    namedCheck(
      "WIDGET_TOKEN_LIFETIME_SECONDS",
      `Expected a whole number of seconds from 1 to ${widgetTokenMaxSeconds}`,
      (n) => n >= 1 && n <= widgetTokenMaxSeconds
    )
  ),
  backupDir: Config.option(Config.string("BACKUP_DIR")),
  supervisor: Config.all({
    systemd: Config.option(Config.string("INVOCATION_ID")),
    pm2: Config.option(Config.string("pm_id")),
    configured: Config.boolean("SUPERVISED").pipe(Config.withDefault(false))
  }).pipe(
    Config.map(({ systemd, pm2, configured }) =>
      Option.isSome(systemd) ? "systemd" : Option.isSome(pm2) ? "pm2" : configured ? "configured" : null
    )
  ),
  backupIntervalHours: Config.integer("BACKUP_INTERVAL_HOURS").pipe(
    Config.withDefault(0),
    Config.validate({ message: "Expected a whole number of hours (0: no scheduled backups)", validation: (n) => n >= 0 })
  ),
  integrationDirs: commaList("INTEGRATION_DIRS"),
  botsDirs: commaList("BOTS_DIR"),
  repoDir: Config.option(Config.string("REPO_DIR")).pipe(Config.map(Option.filter((dir) => dir.trim().length > 0))),
  mcpServersFile: Config.option(Config.string("MCP_SERVERS_FILE")).pipe(Config.map(Option.filter((file) => file.trim().length > 0))),
  hookWebhookUrls: commaList("HOOK_WEBHOOK_URLS").pipe(
    Config.validate({
      message: "Expected a comma-separated list of http(s) URLs",
      validation: (urls) => urls.every(isHttpUrl)
    })
  ),
  jwtSecret: Config.option(Config.redacted("JWT_SECRET")).pipe(
    Config.validate({
      message: "Expected at least 32 characters",
      validation: Option.match({ onNone: () => true, onSome: (secret) => Redacted.value(secret).length >= 32 })
    })
  ),
  accessTokenSeconds: positiveInt("ACCESS_TOKEN_SECONDS", 3_600),
  oidcIssuer: Config.option(httpUrl("OIDC_ISSUER")),
  oidcClientId: Config.option(Config.string("OIDC_CLIENT_ID")),
  oidcClientSecret: Config.option(Config.redacted("OIDC_CLIENT_SECRET")),
  oidcRedirectUri: Config.option(httpUrl("OIDC_REDIRECT_URI")),
  logLevel: Config.literal(...logLevels)("LOG_LEVEL").pipe(Config.withDefault("info" as const)),
  otlpEndpoint: Config.option(httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT")),
  shutdownGraceMs: Config.integer("SHUTDOWN_GRACE_MS").pipe(
    Config.withDefault(10_000),
    Config.validate({ message: "Expected a non-negative integer", validation: (n) => n >= 0 })
  ),
  databaseConnectRetrySeconds: Config.integer("DATABASE_CONNECT_RETRY_SECONDS").pipe(
    Config.withDefault(30),
    Config.validate({ message: "Expected a non-negative integer", validation: (n) => n >= 0 })
  ),
  databasePreparedStatements: Config.boolean("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault(true)),
  pgliteSharedBuffersMb: Config.integer("PGLITE_SHARED_BUFFERS_MB").pipe(
    Config.withDefault(16),
    Config.validate({ message: "Expected an integer from 1 to 4096", validation: (n) => n >= 1 && n <= 4096 })
  ),
  quietCollection: Config.boolean("QUIET_COLLECTION").pipe(Config.withDefault(true)),
  memorySoftLimitMb: Config.integer("MEMORY_SOFT_LIMIT_MB").pipe(
    Config.withDefault(0),
    namedCheck("MEMORY_SOFT_LIMIT_MB", "Expected a whole number of MB (0: 80 % of the memory limit)", (n) => n >= 0)
  ),
  memoryHardLimitMb: Config.integer("MEMORY_HARD_LIMIT_MB").pipe(
    Config.withDefault(0),
    namedCheck("MEMORY_HARD_LIMIT_MB", "Expected a whole number of MB (0: 90 % of the memory limit)", (n) => n >= 0)
  ),
  memorySampleMs: positiveInt("MEMORY_SAMPLE_MS", 1_000),
  drainDelayMs: Config.integer("DRAIN_DELAY_MS").pipe(
    Config.withDefault(0),
    namedCheck("DRAIN_DELAY_MS", "Expected a non-negative integer", (n) => n >= 0)
  ),
  pgliteWasmTier: Config.literal(...pgliteWasmTiers)("PGLITE_WASM_TIER").pipe(Config.withDefault("baseline" as const)),
  databaseListenUrl: Config.option(Config.redacted("DATABASE_LISTEN_URL")),
  metricsPort: Config.option(
    Config.integer("METRICS_PORT").pipe(namedCheck("METRICS_PORT", "Expected a port number from 0 to 65535", (n) => n >= 0 && n <= 65535))
  )
})

/** Reads the configuration from the current `ConfigProvider` (environment plus `.env`). */
export const layer = Layer.effect(AppConfig, appConfig)

/** A folder of the configured repository (REPO_DIR), when there is one. */
export const repositoryFolder = (config: AppConfigShape, folder: "bots" | "skills" | "workflows"): Array<string> =>
  Option.match(config.repoDir, { onNone: () => [], onSome: (dir) => [`${dir.replace(/\/+$/, "")}/${folder}`] })

/** A fixed configuration, for tests and embedding. */
export const layerFrom = (config: AppConfigShape) => Layer.succeed(AppConfig, config)
