/**
 * Settings of outbound LLM calls, read once at startup. They live here rather than in AppConfig
 * because only this domain reads them; an invalid value still fails startup naming the key.
 */
import { Config, Context, Effect, Layer, type Option, type Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"

export interface LlmConfigShape {
  /** Retries of a provider 429 or 5xx (or a timeout) before the next fallback model. */
  readonly maxRetries: number
  /** First backoff; doubles each retry, with jitter; a provider's Retry-After wins when longer. */
  readonly retryBaseMs: number
  /** The longest single wait; a Retry-After beyond it fails at once as rate_limited. */
  readonly retryMaxWaitMs: number
  /** Per request: until the response starts, and between stream chunks. */
  readonly timeoutMs: number
  /** The default of `Llm.embed`: `AppConfig.embeddingModel` (EMBEDDING_MODEL, read there once). */
  readonly embeddingModel: string
  readonly transcriptionModel: string
  /** The answer's limit when a call sets none, for APIs that need one (Anthropic's). */
  readonly defaultMaxTokens: number
  /** Anthropic prompt caching (cache breakpoints on the stable prefix); on unless PROMPT_CACHING=false. */
  readonly promptCaching: boolean
  /** ANTHROPIC_API_KEY / GEMINI_API_KEY: each adds a provider of its family, as OPENAI_API_KEY does the default one. */
  readonly anthropic: EnvironmentProvider
  readonly gemini: EnvironmentProvider
}

export interface EnvironmentProvider {
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly baseUrl: string
}

export class LlmConfig extends Context.Tag("cairn/LlmConfig")<LlmConfig, LlmConfigShape>() {}

const nonNegativeInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: "Expected a non-negative integer", validation: (n) => n >= 0 })
  )

export const llmConfig: Config.Config<Omit<LlmConfigShape, "embeddingModel">> = Config.all({
  maxRetries: nonNegativeInt("LLM_MAX_RETRIES", 3),
  retryBaseMs: nonNegativeInt("LLM_RETRY_BASE_MS", 1000),
  retryMaxWaitMs: Config.map(nonNegativeInt("LLM_RETRY_MAX_WAIT_SECONDS", 60), (s) => s * 1000),
  timeoutMs: Config.map(
    Config.number("LLM_TIMEOUT_SECONDS").pipe(
      Config.withDefault(120),
      Config.validate({ message: "Expected a positive number", validation: (n) => n > 0 })
    ),
    (s) => Math.round(s * 1000)
  ),
  transcriptionModel: Config.string("TRANSCRIPTION_MODEL").pipe(Config.withDefault("whisper-1")),
  defaultMaxTokens: Config.integer("LLM_DEFAULT_MAX_TOKENS").pipe(
    Config.withDefault(4096),
    Config.validate({ message: "Expected a positive integer", validation: (n) => n > 0 })
  ),
  promptCaching: Config.boolean("PROMPT_CACHING").pipe(Config.withDefault(true)),
  anthropic: Config.all({
    apiKey: Config.option(Config.redacted("ANTHROPIC_API_KEY")),
    baseUrl: Config.string("ANTHROPIC_BASE_URL").pipe(Config.withDefault("https://api.anthropic.com"))
  }),
  gemini: Config.all({
    apiKey: Config.option(Config.redacted("GEMINI_API_KEY")).pipe(
      Config.orElse(() => Config.option(Config.redacted("GOOGLE_API_KEY")))
    ),
    baseUrl: Config.string("GEMINI_BASE_URL").pipe(Config.withDefault("https://generativelanguage.googleapis.com"))
  })
})

export const layer = Layer.effect(
  LlmConfig,
  Effect.gen(function*() {
    const { embeddingModel } = yield* AppConfig
    return { ...(yield* Effect.suspend(() => llmConfig)), embeddingModel }
  })
)
