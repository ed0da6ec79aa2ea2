/**
 * When an LLM call is tried again: a 429, 5xx or timeout, with exponential backoff and jitter (a
 * provider's Retry-After wins), never one wait past RETRY_MAX_WAIT_MS. Used by every call in `Llm.ts`.
 */
import { Duration, Effect, Schedule } from "effect"
import { isRetryable } from "./Family.ts"
import type { LlmConfigShape } from "./LlmConfig.ts"
import type { LlmError } from "./Model.ts"

type RetryConfig = Pick<LlmConfigShape, "maxRetries" | "retryBaseMs" | "retryMaxWaitMs">

/**
 * How long to wait before retry `attempt` (0-based), or undefined to give up: exponential from
 * `retryBaseMs` with jitter in [50%, 100%]; a Retry-After is honoured as given; no single wait may
 * exceed `retryMaxWaitMs`.
 */
export const retryDelayMs = (config: RetryConfig, attempt: number, error: LlmError, random = Math.random()): number | undefined => {
  if (attempt >= config.maxRetries || !isRetryable(error)) return undefined
  if (error.retryAfterSeconds !== undefined) {
    const ms = Math.ceil(error.retryAfterSeconds * 1000)
    return ms > config.retryMaxWaitMs ? undefined : ms
  }
  const backoff = config.retryBaseMs * 2 ** attempt * (0.5 + random / 2)
  return Math.min(Math.round(backoff), config.retryMaxWaitMs)
}

/**
 * The retry schedule of a blocking call: fed each failure, it waits what `retryDelayMs` says
 * (Retry-After when the provider gave one, else backoff with jitter) and stops when that says no.
 */
export const llmRetries = (config: RetryConfig) =>
  Schedule.identity<LlmError>().pipe(
    Schedule.zipWith(Schedule.count, (error, attempt) => ({ error, delay: retryDelayMs(config, attempt, error) })),
    Schedule.whileOutput(({ delay }) => delay !== undefined),
    Schedule.addDelay(({ delay }) => Duration.millis(delay ?? 0)),
    Schedule.tapOutput(({ error, delay }) =>
      Effect.logDebug("Retrying an LLM call").pipe(Effect.annotateLogs({ kind: error.kind, status: error.status, delay_ms: delay }))
    )
  )
