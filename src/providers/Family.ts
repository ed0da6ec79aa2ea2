/**
 * A provider family: the calls one API (OpenAI's chat completions, Anthropic's Messages, Gemini's)
 * answers, each mapped to and from Cairn's own shapes (`Model.ts`) and each failure to an
 * `LlmError`. Retries, fallback, usage records and slots are `Llm`'s, the same for every family.
 */
import { Effect } from "effect"
import {
  type ChatRequest,
  LlmError,
  type LlmFinished,
  type LlmStreamEvent,
  type ProviderState,
  type ToolCall,
  type Usage
} from "./Model.ts"

/** The parts of a provider the calls need; `Providers.ts` has the rest. */
export interface FamilyTarget {
  readonly provider: {
    readonly id: string
    readonly apiKey: string | undefined
    readonly baseUrl: string
    readonly extraHeaders: Readonly<Record<string, string>>
  }
  /** The model id the provider knows. */
  readonly model: string
  /** The id callers use. */
  readonly id: string
}

/** A blocking call's answer. */
export interface ChatOutcome {
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: Usage | null
  readonly finishReason: string | null
  /** The model's reasoning, when the provider returned it apart from the answer. */
  readonly reasoning?: string
  readonly providerState?: ProviderState
}

export interface Embedded {
  readonly embeddings: ReadonlyArray<ReadonlyArray<number>>
  readonly usage: Usage | null
}

/** What a speech-to-text engine answered: the text, and the language and length when it says them. */
export interface Transcribed {
  readonly text: string
  readonly language: string | null
  readonly durationSeconds: number | null
}

export interface Family {
  readonly chat: (target: FamilyTarget, request: ChatRequest) => Effect.Effect<ChatOutcome, LlmError>
  /** One streamed call: deltas to `onEvents` a batch at a time, in order; answers `Finished`. */
  readonly chatStream: <E>(
    target: FamilyTarget,
    request: ChatRequest,
    idleTimeoutMs: number,
    onEvents: (events: ReadonlyArray<LlmStreamEvent>) => Effect.Effect<void, E>
  ) => Effect.Effect<LlmFinished, LlmError | E>
  readonly embed: (target: FamilyTarget, input: ReadonlyArray<string>) => Effect.Effect<Embedded, LlmError>
  readonly transcribe: (
    target: FamilyTarget,
    audio: Uint8Array,
    fileName: string,
    mimeType: string
  ) => Effect.Effect<Transcribed, LlmError>
  /** The model ids the provider lists; the failure is a message with credentials removed. */
  readonly models: (provider: FamilyTarget["provider"], timeoutMs: number) => Effect.Effect<ReadonlyArray<string>, string>
}

/**
 * A family whose module (and its SDK, a few hundred modules) loads on its first call, not at the
 * server's start: a server that never calls a provider of the family never loads it.
 */
export const loadedOnUse = (load: () => Promise<Family>): Family => {
  let loading: Promise<Family> | undefined
  const family = Effect.promise(() => (loading ??= load()))
  return {
    chat: (target, request) => Effect.flatMap(family, (f) => f.chat(target, request)),
    chatStream: (target, request, idleTimeoutMs, onEvents) =>
      Effect.flatMap(family, (f) => f.chatStream(target, request, idleTimeoutMs, onEvents)),
    embed: (target, input) => Effect.flatMap(family, (f) => f.embed(target, input)),
    transcribe: (target, audio, fileName, mimeType) => Effect.flatMap(family, (f) => f.transcribe(target, audio, fileName, mimeType)),
    models: (provider, timeoutMs) => Effect.flatMap(family, (f) => f.models(provider, timeoutMs))
  }
}

/** 429, 5xx, timeouts and connection failures are worth another try; a malformed 200 is not. */
export const isRetryable = (error: LlmError) =>
  error.kind === "rate_limited" ||
  error.kind === "timeout" ||
  (error.kind === "upstream" && (error.status === undefined || error.status >= 500))

/** Seconds from Retry-After (seconds or an HTTP date) or retry-after-ms. */
export const retryAfterSeconds = (headers: Readonly<Record<string, string>> | undefined): number | undefined => {
  if (!headers) return undefined
  const rawMs = headers["retry-after-ms"]
  const ms = Number(rawMs)
  if (typeof rawMs === "string" && rawMs.length > 0 && Number.isFinite(ms) && ms >= 0) return ms / 1000
  const raw = headers["retry-after"]
  if (typeof raw !== "string" || raw.length === 0) return undefined
  const seconds = Number(raw)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds
  const date = Date.parse(raw)
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000)
}

/** A token count as the API promises it (a non-negative integer), whatever the provider sent. */
export const tokens = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.round(value)) : undefined

/** A provider's words that say the prompt does not fit the model's window (any family). */
export const saysContextTooLong = (detail: string) =>
  /prompt is too long|context (length|window)|maximum context|too many (input )?tokens|exceeds the (maximum|context)|input token count/i
    .test(
      detail
    )

/**
 * A provider's error answer as Cairn's, the same for every family: 429 waits (its retry-after when
 * given), 404 is an unknown model, 400/413/422 (and any other 4xx that says the prompt does not
 * fit) the caller's request, anything else the provider's failure (retried when 5xx).
 */
export const statusError = (status: number, detail: string, retryAfter: number | undefined): LlmError => {
  if (status === 429) {
    return new LlmError({ kind: "rate_limited", status, detail, ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}) })
  }
  if (status === 404) return new LlmError({ kind: "unknown_model", status, detail })
  if (status === 400 || status === 413 || status === 422 || (status < 500 && saysContextTooLong(detail))) {
    return new LlmError({ kind: "invalid_request", status, detail })
  }
  return new LlmError({ kind: "upstream", status, detail })
}

/** A failure that is no error answer of the provider's: a body that was not JSON, or an answer that broke off. */
export const unreadableAnswer = (target: FamilyTarget, error: unknown, clean: (message: string) => string): LlmError => {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof SyntaxError) {
    return new LlmError({ kind: "upstream", status: 200, detail: clean(`Malformed response from the provider (${target.id}): ${message}`) })
  }
  return new LlmError({ kind: "upstream", detail: clean(`The provider's answer broke off (${target.id}): ${message}`) })
}

/**
 * A tool call's arguments as an object for the families that take objects (Anthropic's `input`,
 * Gemini's `args`): text that is not a JSON object travels as `{"_raw": text}`, so the model sees
 * what it sent instead of the request failing.
 */
export const argumentsObject = (raw: string): Record<string, unknown> => {
  if (!raw.trim()) return {}
  try {
    const value = JSON.parse(raw)
    return value && typeof value === "object" && !Array.isArray(value) ? value : { value }
  } catch {
    return { _raw: raw }
  }
}

/** Splits a `data:` URL into its media type and base64 payload; null for any other URL. */
export const dataUrlParts = (url: string): { readonly mediaType: string; readonly data: string } | null => {
  const match = /^data:([^;,]+)(;base64)?,(.*)$/s.exec(url)
  if (!match) return null
  const data = match[2] ? match[3]! : Buffer.from(decodeURIComponent(match[3]!), "utf8").toString("base64")
  return { mediaType: match[1]!, data }
}

/** A message's text, whatever its shape (parts' texts joined). */
export const textOf = (content: ChatRequest["messages"][number]["content"]): string => {
  if (typeof content === "string") return content
  if (!content) return ""
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
}
