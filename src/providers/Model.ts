/**
 * The LLM contract the agent loop and the documents domain code against (`Llm`), and the schemas
 * of the provider admin API and the completion proxy.
 */
import { Schema } from "effect"
import { bodyOptions, headerNamePattern, headerValueMessage, isHeaderSafe } from "../contract/Params.ts"

// ---------------------------------------------------------------------------------------------
// The Llm contract

export type ChatRole = "system" | "user" | "assistant" | "tool"

/** A part of a multimodal message, in OpenAI's chat shape (what OpenAI-compatible servers take). */
export type ContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }
  | { readonly type: "input_audio"; readonly input_audio: { readonly data: string; readonly format: string } }

export interface ChatMessage {
  readonly role: ChatRole
  /** Text, or parts when the message carries images. */
  readonly content: string | null | ReadonlyArray<ContentPart>
  readonly name?: string
  readonly tool_calls?: ReadonlyArray<{
    readonly id: string
    readonly type: "function"
    readonly function: { readonly name: string; readonly arguments: string }
  }>
  readonly tool_call_id?: string
  /**
   * What a provider gave with an assistant message that it needs back in the same tool loop:
   * Anthropic's signed thinking blocks, Gemini's thought signatures. Sent only to the family that
   * made it (`family`); any other provider never sees it.
   */
  readonly providerState?: ProviderState
}

/** A provider family's opaque state of one assistant message (see `ChatMessage.providerState`). */
export interface ProviderState {
  readonly family: string
  /** Anthropic: the thinking and redacted-thinking blocks, in order, as the API sent them. */
  readonly thinking?: ReadonlyArray<ThinkingBlock>
  /** Gemini: the thought signature of each function call, by tool call id. */
  readonly signatures?: Readonly<Record<string, string>>
}

export type ThinkingBlock =
  | { readonly type: "thinking"; readonly thinking: string; readonly signature: string }
  | { readonly type: "redacted_thinking"; readonly data: string }

export interface ToolSchema {
  readonly type: "function"
  readonly function: { readonly name: string; readonly description?: string; readonly parameters: Record<string, unknown> }
}

/** Who a call is for, so the usage record can say it. */
export interface UsageContext {
  readonly source: "proxy" | "agent" | "embedding" | "integration" | "speech"
  readonly principalKind?: string
  readonly principalId?: string
  /**
   * The credential a call is made for, when the principal alone does not say it (a widget token's
   * identity): the lane it waits in for a provider slot (`Gate.ts`). Not recorded.
   */
  readonly caller?: string
  /**
   * The signed-in user the credential belongs to: the user's own, or the owner of the API key
   * (`owner_user_id`). A user's calls, through any of their keys, wait in one lane (`Gate.ts`).
   * Not recorded.
   */
  readonly user?: string
  readonly botId?: string
  /** The channel a turn answers in: a channel's budget counts it. Not recorded. */
  readonly channelId?: string
  readonly sessionId?: string
}

export interface ChatRequest {
  /** "provider/model", or a bare model id for the default provider; undefined → DEFAULT_MODEL. */
  readonly model?: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools?: ReadonlyArray<ToolSchema>
  readonly temperature?: number
  readonly max_tokens?: number
  /**
   * Extended thinking's budget in tokens (Anthropic's `budget_tokens`, Gemini's `thinkingBudget`);
   * undefined or 0: off. OpenAI-compatible servers are not told (their reasoning is the model's own).
   */
  readonly thinkingBudgetTokens?: number
  /** Provider-specific parameters, sent in the request body as given. */
  readonly extra?: Record<string, unknown>
  /** Tried in order after the model's retries fail. */
  readonly fallbackModels?: ReadonlyArray<string>
  readonly usage: UsageContext
}

export interface Usage {
  /** Every input token, cached ones included. */
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
  /** Of `prompt_tokens`, those read from the provider's prompt cache. */
  readonly cache_read_tokens?: number
  /** Of `prompt_tokens`, those written to the provider's prompt cache. */
  readonly cache_write_tokens?: number
  /** Counted here with a tokenizer: the provider reported none. */
  readonly estimated?: boolean
}

export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

export type LlmStreamEvent =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "ReasoningDelta"; readonly text: string }
  | {
    readonly _tag: "ToolCallDelta"
    readonly index: number
    readonly id?: string
    readonly name?: string
    readonly argumentsDelta: string
  }
  /** Emitted before waiting on a provider 429. */
  | { readonly _tag: "RateLimitWait"; readonly waitSeconds: number }
  | { readonly _tag: "Fallback"; readonly originalModel: string; readonly fallbackModel: string }
  | {
    readonly _tag: "Finished"
    readonly model: string
    readonly text: string
    readonly toolCalls: ReadonlyArray<ToolCall>
    readonly usage: Usage | null
    readonly finishReason: string | null
    /** What the provider needs back with this answer in the same tool loop. */
    readonly providerState?: ProviderState
  }

/** A streamed call's last word: the whole text, the tool calls, usage. */
export type LlmFinished = Extract<LlmStreamEvent, { _tag: "Finished" }>

export interface CompletionResult {
  readonly content: string
  readonly model: string
  readonly usage: Usage | null
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly fallback?: { readonly originalModel: string; readonly fallbackModel: string }
}

export interface EmbedRequest {
  /** An embedding model id, "provider/model"; undefined → EMBEDDING_MODEL. */
  readonly model?: string
  readonly input: ReadonlyArray<string>
  readonly usage: UsageContext
}

export interface EmbedResult {
  readonly model: string
  readonly embeddings: ReadonlyArray<ReadonlyArray<number>>
  readonly usage: Usage | null
}

export interface TranscribeRequest {
  /** undefined → TRANSCRIPTION_MODEL. */
  readonly model?: string
  readonly audio: Uint8Array
  readonly fileName: string
  readonly mimeType: string
  /** The audio's length when the caller knows it: usage and cost are counted in it. */
  readonly audioSeconds?: number | null
  readonly usage: UsageContext
}

/** `budget_exceeded`: refused before it was sent, by a block budget (src/budgets/); `retryAfterSeconds` is the period's end. */
export const LlmErrorKind = Schema.Literal("rate_limited", "upstream", "invalid_request", "unknown_model", "timeout", "budget_exceeded")
export type LlmErrorKind = typeof LlmErrorKind.Type

/** A failed LLM call. `detail` is the provider's message with any credential removed. */
export class LlmError extends Schema.TaggedError<LlmError>()("LlmError", {
  kind: LlmErrorKind,
  status: Schema.optional(Schema.Number),
  detail: Schema.String,
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

// ---------------------------------------------------------------------------------------------
// Providers admin API

/** Provider ids are path segments and model-id prefixes, so they never contain "/". */
export const ProviderId = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: () => "Expected 1-64 characters: lower-case letters, digits, '-' and '_', starting with a letter or digit"
  })
)

/** An http(s) URL without credentials in it: those belong in `api_key` or `extra_headers`, which are kept secret. */
const HttpUrl = Schema.String.pipe(
  Schema.pattern(/^https?:\/\/[^\s]+$/, { message: () => "Expected an http(s) URL" }),
  Schema.filter((url) => {
    try {
      const parsed = new URL(url)
      return parsed.username === "" && parsed.password === "" ? undefined : "Put credentials in api_key or extra_headers, not in the URL"
    } catch {
      return "Expected an http(s) URL"
    }
  })
)

const Price = Schema.Number.pipe(Schema.nonNegative(), Schema.finite())

export class ProviderModel extends Schema.Class<ProviderModel>("ProviderModel")({
  id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  /** USD per million prompt tokens; overrides the shipped price table. */
  input_price_per_million: Schema.optionalWith(Schema.NullOr(Price), { default: () => null }),
  /** USD per million completion tokens. */
  output_price_per_million: Schema.optionalWith(Schema.NullOr(Price), { default: () => null }),
  /** USD per million prompt tokens read from the provider's cache; null: the shipped share of the input price. */
  cache_read_price_per_million: Schema.optionalWith(Schema.NullOr(Price), { default: () => null }),
  /** USD per million prompt tokens written to the provider's cache. */
  cache_write_price_per_million: Schema.optionalWith(Schema.NullOr(Price), { default: () => null }),
  /** Whether the model takes images; null: known models by name, any other is let try. */
  vision: Schema.optionalWith(Schema.NullOr(Schema.Boolean), { default: () => null })
}) {}

/** A key or an extra header: both are sent as header values. */
const HeaderValue = Schema.String.pipe(Schema.filter((value) => isHeaderSafe(value) || headerValueMessage))

const ExtraHeaders = Schema.Record({ key: Schema.String.pipe(Schema.pattern(headerNamePattern)), value: HeaderValue })

/** The API a provider speaks: OpenAI's chat completions (and every server compatible with it), Anthropic's Messages, Gemini's. */
export const ProviderType = Schema.Literal("openai", "anthropic", "gemini")
export type ProviderType = typeof ProviderType.Type

export class CreateProvider extends Schema.Class<CreateProvider>("CreateProvider")(
  {
    id: ProviderId,
    type: Schema.optionalWith(ProviderType, { default: () => "openai" as const }),
    base_url: HttpUrl,
    api_key: Schema.optionalWith(Schema.NullOr(HeaderValue), { exact: true }),
    extra_headers: Schema.optionalWith(ExtraHeaders, { default: () => ({}) }),
    models: Schema.optionalWith(Schema.Array(ProviderModel), { default: () => [] })
  },
  bodyOptions
) {}

/**
 * A replacement. `api_key`: omitted, or the masked value a read returned, keeps the stored key;
 * null removes it; anything else replaces it. A `base_url` on another origin must bring the key
 * (and masked credential headers) again: stored ones are not carried to a new server.
 */
export class UpdateProvider extends Schema.Class<UpdateProvider>("UpdateProvider")(
  {
    type: Schema.optionalWith(ProviderType, { default: () => "openai" as const }),
    base_url: HttpUrl,
    api_key: Schema.optionalWith(Schema.NullOr(HeaderValue), { exact: true }),
    extra_headers: Schema.optionalWith(ExtraHeaders, { default: () => ({}) }),
    models: Schema.optionalWith(Schema.Array(ProviderModel), { default: () => [] })
  },
  bodyOptions
) {}

export class ProviderView extends Schema.Class<ProviderView>("ProviderView")({
  id: Schema.String,
  type: ProviderType,
  base_url: Schema.String,
  /** Masked: never the key itself. */
  api_key: Schema.NullOr(Schema.String),
  extra_headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  models: Schema.Array(ProviderModel),
  /** "environment" for the default provider (OPENAI_BASE_URL / OPENAI_API_KEY), read-only here. */
  source: Schema.Literal("environment", "stored"),
  is_default: Schema.Boolean
}) {}

export class ProviderList extends Schema.Class<ProviderList>("ProviderList")({
  providers: Schema.Array(ProviderView)
}) {}

export class ModelEntry extends Schema.Class<ModelEntry>("ModelEntry")({
  /** The id to use in requests ("provider/model", bare for the default provider). */
  id: Schema.String,
  model: Schema.String,
  input_price_per_million: Schema.NullOr(Schema.Number),
  output_price_per_million: Schema.NullOr(Schema.Number),
  /** configured: listed on the provider here; upstream: reported by the provider's /models. */
  sources: Schema.Array(Schema.Literal("configured", "upstream"))
}) {}

export class ModelList extends Schema.Class<ModelList>("ModelList")({
  provider_id: Schema.String,
  models: Schema.Array(ModelEntry),
  /** Why the provider's own list is missing, when it could not be fetched. */
  upstream_error: Schema.NullOr(Schema.String)
}) {}

// ---------------------------------------------------------------------------------------------
// Completion proxy

const ToolCallWire = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

export const ProxyMessage = Schema.Struct({
  role: Schema.Literal("system", "user", "assistant", "tool"),
  content: Schema.NullOr(Schema.String),
  name: Schema.optionalWith(Schema.String, { exact: true }),
  tool_calls: Schema.optionalWith(Schema.Array(ToolCallWire), { exact: true }),
  tool_call_id: Schema.optionalWith(Schema.String, { exact: true })
})

export class CompletionRequest extends Schema.Class<CompletionRequest>("CompletionRequest")(
  {
    model: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1)), { exact: true }),
    messages: Schema.Array(ProxyMessage).pipe(Schema.minItems(1)),
    temperature: Schema.optionalWith(
      Schema.Number.pipe(Schema.between(0, 2, { message: () => "Expected a number from 0 to 2" })),
      { exact: true }
    ),
    max_tokens: Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { exact: true }),
    extra: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { exact: true }),
    /** Cairn extension: models tried in order when the model fails after its retries. */
    fallback_models: Schema.optionalWith(Schema.Array(Schema.String.pipe(Schema.minLength(1))), { exact: true })
  },
  bodyOptions
) {}

export const UsageSchema = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int
})

export class CompletionResponse extends Schema.Class<CompletionResponse>("CompletionResponse")({
  content: Schema.String,
  model: Schema.String,
  usage: Schema.NullOr(UsageSchema)
}) {}
