/**
 * The hook contract, declared once for the core and for integrations: the spec's seven events and
 * Cairn's two budget events, the extra keys each carries (as schemas: encoding through them drops
 * any other key), the context a callback receives and the callback types. `src/hooks` runs it; integrations import the types
 * through `./index.ts` (type-only there, so an integration loads nothing at run time).
 */
import { Schema } from "effect"

const Count = Schema.Number
const Milliseconds = Schema.Number
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Where a budget stood when one of its events fired (src/budgets/). */
const budgetExtras = Schema.Struct({
  budget_id: Schema.String,
  scope: Schema.String,
  target: Schema.NullOr(Schema.String),
  period: Schema.String,
  /** The period's first instant (ISO 8601); null for a total budget. */
  period_start: Schema.NullOr(Schema.String),
  action: Schema.String,
  limit_usd: Schema.NullOr(Schema.Number),
  limit_tokens: Schema.NullOr(Count),
  spent_usd: Schema.Number,
  spent_tokens: Count,
  /** Spent over limit, the larger share of the two limits. */
  used: Schema.Number
})

/** The extra keys of each event: the spec's, and the budget events Cairn adds. Encoding through these drops any other key. */
export const hookExtras = {
  before_context_assembly: Schema.Struct({ user_message: Schema.String }),
  before_llm_call: Schema.Struct({
    model: Schema.String,
    message_count: Count,
    tools_count: Count,
    provider_id: Schema.NullOr(Schema.String),
    iteration: Count
  }),
  after_llm_call: Schema.Struct({
    model: Schema.String,
    duration_ms: Milliseconds,
    // Null when the provider reports no usage.
    prompt_tokens: Schema.NullOr(Count),
    completion_tokens: Schema.NullOr(Count),
    total_tokens: Schema.NullOr(Count),
    tool_calls_count: Count,
    fallback_used: Schema.Boolean,
    fallback_model: Schema.NullOr(Schema.String),
    iteration: Count,
    provider_id: Schema.NullOr(Schema.String)
  }),
  before_tool_execution: Schema.Struct({
    tool_name: Schema.String,
    /** Where the tool runs: "core", "integration", "client", ... */
    tool_type: Schema.String,
    args: JsonObject,
    iteration: Count
  }),
  after_tool_call: Schema.Struct({ tool_name: Schema.String, tool_args: JsonObject, duration_ms: Milliseconds }),
  after_response: Schema.Struct({ response_length: Count, tool_calls_made: Count }),
  /** A budget's spend this period reached its `warn_at` share (once per period). */
  budget_warning: budgetExtras,
  /** A budget's spend reached its limit, or a call was refused by it (once per period). */
  budget_exceeded: budgetExtras,
  before_transcription: Schema.Struct({
    audio_format: Schema.String,
    audio_size_bytes: Count,
    /** Who sent the audio: "api" (POST /transcribe), "chat", or the integration's id. */
    source: Schema.String
  })
} as const

export type HookExtras = { readonly [E in keyof typeof hookExtras]: (typeof hookExtras)[E]["Type"] }
export type HookEvent = keyof HookExtras

/** Events whose callbacks are broadcast and never awaited. */
export type BroadcastEvent = Exclude<HookEvent, OverrideEvent>
/** The one event whose first non-null callback result replaces the default behaviour. */
export type OverrideEvent = "before_transcription"

export const hookEvents: ReadonlyArray<HookEvent> = Object.keys(hookExtras) as Array<HookEvent>

export const isHookEvent = (value: unknown): value is HookEvent =>
  typeof value === "string" && Object.prototype.hasOwnProperty.call(hookExtras, value)

/** Who and what a hook event is about; ids are null where the run has none (a bare transcription). */
export interface HookIds {
  readonly bot_id: string | null
  readonly session_id: string | null
  readonly channel_id: string | null
  readonly client_id: string | null
  readonly correlation_id: string | null
}

/** What a callback receives: the ids plus the event's extra keys. */
export interface HookContext<E extends HookEvent = HookEvent> extends HookIds {
  readonly extra: HookExtras[E]
}

/** A broadcast callback: sync or async; its result is ignored, its failure logged. */
export type BroadcastCallback<E extends HookEvent> = (context: HookContext<E>) => unknown

/** What an override callback receives: the event's context and the audio to transcribe. */
export interface OverrideContext<E extends HookEvent = OverrideEvent> extends HookContext<E> {
  /** The audio file, as the default engine would be sent it (raw PCM already wrapped as WAV). */
  readonly audio: Uint8Array
}

/** An override callback: a string replaces the default; null or undefined falls through. */
export type OverrideCallback<E extends HookEvent> = (
  context: OverrideContext<E>
) => string | null | undefined | PromiseLike<string | null | undefined>

export type HookCallback<E extends HookEvent> = E extends OverrideEvent ? OverrideCallback<E> : BroadcastCallback<E>

/** Removes the callback it was returned for; calling it twice is harmless. */
export type Unregister = () => void
