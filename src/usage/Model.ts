/** Usage records of LLM calls and the report the admin API answers. */
import { Schema } from "effect"
import { queryParams } from "../contract/Params.ts"

/** One model tried by one LLM call. */
export interface UsageRecord {
  readonly at: Date
  readonly source: string
  readonly principalKind: string | null
  readonly principalId: string | null
  readonly botId: string | null
  readonly sessionId: string | null
  readonly providerId: string
  readonly model: string
  readonly promptTokens: number
  readonly completionTokens: number
  readonly totalTokens: number
  /** Of `promptTokens`, read from / written to the provider's prompt cache. */
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
  /** The counts are this server's estimate: the provider reported none. */
  readonly estimated?: boolean
  /** Seconds of audio a speech-to-text call took in (0 for every other call). */
  readonly audioSeconds?: number
  readonly costUsd: number | null
  readonly durationMs: number
  /** "ok", or "error" with `errorKind` (an LlmError kind). */
  readonly outcome: "ok" | "error"
  readonly errorKind: string | null
}

export const UsageQuery = queryParams({
  /** ISO date-time; default 30 days before `to`. */
  from: Schema.optionalWith(Schema.Date, { exact: true }),
  /** ISO date-time, exclusive; default now. */
  to: Schema.optionalWith(Schema.Date, { exact: true })
})

const totalsFields = {
  calls: Schema.Int,
  errors: Schema.Int,
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int,
  /** Of prompt_tokens, those read from a provider's prompt cache (priced lower). */
  cache_read_tokens: Schema.Int,
  /** Of prompt_tokens, those written to a provider's prompt cache (priced higher, where the provider charges for it). */
  cache_write_tokens: Schema.Int,
  /** Calls whose token counts were estimated here (the provider reported none). */
  estimated_calls: Schema.Int,
  /** USD; calls with an unknown price add nothing. */
  cost_usd: Schema.Number,
  /** Calls whose price is unknown (so cost_usd leaves them out). */
  unpriced_calls: Schema.Int,
  /** Seconds of audio transcribed. */
  audio_seconds: Schema.Number
}

export const UsageTotals = Schema.Struct(totalsFields)
export type UsageTotals = typeof UsageTotals.Type

export class UsageReport extends Schema.Class<UsageReport>("UsageReport")({
  from: Schema.String,
  to: Schema.String,
  totals: UsageTotals,
  by_model: Schema.Array(Schema.Struct({ provider_id: Schema.String, model: Schema.String, ...totalsFields })),
  by_bot: Schema.Array(Schema.Struct({ bot_id: Schema.NullOr(Schema.String), ...totalsFields })),
  /** By caller: an API key, a user, a widget token or the static key (`principal_id` empty). */
  by_key: Schema.Array(
    Schema.Struct({ principal_kind: Schema.NullOr(Schema.String), principal_id: Schema.NullOr(Schema.String), ...totalsFields })
  ),
  /** UTC days, "YYYY-MM-DD". */
  by_day: Schema.Array(Schema.Struct({ day: Schema.String, ...totalsFields }))
}) {}
