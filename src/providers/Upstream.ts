/**
 * One call to one provider over its `OpenAiClient` (the `openai` SDK), and the mapping of every wire failure to an
 * `LlmError` whose detail is the provider's message with credentials removed. Retries, fallback and
 * usage are `Llm`'s.
 */
import { Effect } from "effect"
import { scrub } from "../secrets/Vault.ts"
import { type ChatRequest, LlmError, type LlmFinished, type LlmStreamEvent, type ToolCall, type Usage } from "./Model.ts"
import { type ChunkStream, WireError } from "./OpenAiClient.ts"
import { providerSecrets, type Target } from "./Providers.ts"
import { toWireNames, type WireNames } from "./ToolNames.ts"

/** The parts of OpenAI's chat completion objects that are read here (anything may be missing). */
interface WireUsage {
  readonly prompt_tokens?: number
  readonly completion_tokens?: number
  readonly total_tokens?: number
}
interface WireToolCall {
  readonly index?: number
  readonly id?: string
  readonly type?: string
  readonly function?: { readonly name?: string; readonly arguments?: string }
}
interface ChatCompletion {
  readonly choices?: ReadonlyArray<{
    readonly message?: { readonly content?: unknown; readonly tool_calls?: ReadonlyArray<WireToolCall> | null }
    readonly finish_reason?: string | null
  }>
  readonly usage?: WireUsage | null
}
interface ChatCompletionChunk {
  readonly choices?: ReadonlyArray<{
    readonly delta?: {
      readonly content?: unknown
      readonly reasoning_content?: unknown
      readonly reasoning?: unknown
      readonly tool_calls?: ReadonlyArray<WireToolCall> | null
    }
    readonly finish_reason?: string | null
  }>
  readonly usage?: WireUsage | null
}

/** Seconds from Retry-After (seconds or an HTTP date) or retry-after-ms. */
const retryAfterSeconds = (headers: Readonly<Record<string, string>> | undefined): number | undefined => {
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

export const toLlmError = (target: Target) => (error: unknown): LlmError => {
  const clean = (message: string) => scrub(message, providerSecrets(target.provider))
  const where = `${target.id}`
  if (error instanceof LlmError) return error
  if (error instanceof WireError) {
    switch (error.reason) {
      case "timeout":
        return new LlmError({ kind: "timeout", detail: `The provider did not answer in time (${where})` })
      case "unreachable":
        return new LlmError({ kind: "upstream", detail: clean(`Cannot reach the provider (${where}): ${error.message}`) })
      case "stream_error":
        return new LlmError({ kind: "upstream", detail: clean(error.message) })
      case "malformed":
        return new LlmError({
          kind: "upstream",
          status: 200,
          detail: clean(`Malformed response from the provider (${where}): ${error.message}`)
        })
      case "status": {
        const status = error.status ?? 0
        const detail = clean(error.message)
        if (status === 429) {
          const after = retryAfterSeconds(error.headers)
          return new LlmError({ kind: "rate_limited", status, detail, ...(after !== undefined ? { retryAfterSeconds: after } : {}) })
        }
        if (status === 404) return new LlmError({ kind: "unknown_model", status, detail })
        if (status === 400 || status === 422) return new LlmError({ kind: "invalid_request", status, detail })
        return new LlmError({ kind: "upstream", status, detail })
      }
    }
  }
  // A body that is not what an OpenAI-compatible server sends (a reply without choices, say).
  const message = error instanceof Error ? error.message : String(error)
  return new LlmError({ kind: "upstream", status: 200, detail: clean(`Malformed response from the provider (${where}): ${message}`) })
}

/** 429, 5xx, timeouts and connection failures are worth another try; a malformed 200 is not. */
export const isRetryable = (error: LlmError) =>
  error.kind === "rate_limited" ||
  error.kind === "timeout" ||
  (error.kind === "upstream" && (error.status === undefined || error.status >= 500))

/**
 * The request body: `extra` first, so provider-specific fields pass untouched, then ours, which it
 * cannot override (model, messages, streaming).
 */
const chatBody = (target: Target, request: ChatRequest, names: WireNames) => {
  const { stream: _stream, stream_options: _streamOptions, ...extra } = request.extra ?? {}
  return {
    ...extra,
    model: target.model,
    messages: names.messages,
    ...(names.tools && names.tools.length > 0 ? { tools: names.tools } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {})
  } as any
}

/** A token count as the API promises it (a non-negative integer), whatever the provider sent. */
const tokens = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.round(value)) : undefined

const usageOf = (usage: WireUsage | null | undefined): Usage | null => {
  if (!usage || typeof usage !== "object") return null
  const prompt = tokens(usage.prompt_tokens) ?? 0
  const completion = tokens(usage.completion_tokens) ?? 0
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: tokens(usage.total_tokens) ?? prompt + completion }
}

export interface ChatOutcome {
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: Usage | null
  readonly finishReason: string | null
}

export const chatOnce = (target: Target, request: ChatRequest): Effect.Effect<ChatOutcome, LlmError> => {
  // Tool names the provider would refuse travel as stand-ins (ToolNames.ts).
  const names = toWireNames(request.tools, request.messages)
  return target.provider.client.chat(chatBody(target, request, names)).pipe(
    Effect.mapError(toLlmError(target)),
    Effect.flatMap((reply) => {
      const completion = reply as ChatCompletion
      const choice = completion?.choices?.[0]
      if (!choice || typeof choice !== "object") {
        return Effect.fail(toLlmError(target)(new Error("the reply has no choices")))
      }
      return Effect.succeed({
        content: typeof choice.message?.content === "string" ? choice.message.content : "",
        toolCalls: (choice.message?.tool_calls ?? []).flatMap((call) =>
          call.type === "function" || (call.type === undefined && call.function)
            ? [names.toolCallBack({ id: call.id ?? "", name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" })]
            : []
        ),
        usage: usageOf(completion.usage),
        finishReason: choice.finish_reason ?? null
      })
    })
  )
}

/**
 * The chunks of an opened provider stream as batches: the stream hands over each read's payloads,
 * they wait in a buffer, and `next` takes everything buffered (the chunks that arrived together: a
 * packet holds several tokens), waiting when there is none. So a token costs the run one loop step,
 * not a pass through stream stages. The idle timeout is one timer re-armed on every read (a
 * provider's keep-alive comment counts): when it fires, the response is ended and the read fails as
 * a timeout.
 */
const batchesOf = (
  events: ChunkStream,
  idleTimeoutMs: number,
  failure: (error: WireError, timedOut: boolean) => LlmError
) => {
  let buffer: Array<ChatCompletionChunk> = []
  let ended = false
  let failed: LlmError | undefined
  let closed = false
  let timedOut = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let waiting: ((effect: Effect.Effect<ReadonlyArray<ChatCompletionChunk> | null, LlmError>) => void) | undefined
  const take = (): Effect.Effect<ReadonlyArray<ChatCompletionChunk> | null, LlmError> => {
    if (buffer.length > 0) {
      const batch = buffer
      buffer = []
      return Effect.succeed(batch)
    }
    if (failed) return Effect.fail(failed)
    return Effect.succeed(null)
  }
  const wake = () => {
    const resume = waiting
    waiting = undefined
    resume?.(take())
  }
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      timedOut = true
      events.abort()
    }, idleTimeoutMs)
  }
  arm()
  events.read({
    chunks: (batch) => {
      if (closed || timedOut) return
      arm()
      if (batch.length === 0) return
      for (const chunk of batch) buffer.push(chunk as ChatCompletionChunk)
      wake()
    },
    end: () => {
      clearTimeout(timer)
      if (closed) return
      ended = true
      wake()
    },
    fail: (error) => {
      clearTimeout(timer)
      if (closed) return
      failed = failure(error, timedOut)
      wake()
    }
  })
  return {
    /** The chunks buffered since the last call (waiting for one); null once the stream ended. */
    next: Effect.async<ReadonlyArray<ChatCompletionChunk> | null, LlmError>((resume) => {
      if (buffer.length > 0 || ended || failed) return resume(take())
      waiting = resume
      return Effect.sync(() => {
        waiting = undefined
      })
    }),
    close: () => {
      closed = true
      clearTimeout(timer)
    }
  }
}

/**
 * One streamed completion: its deltas handed to `onEvents` a batch at a time, in order, as they
 * come; answers `Finished` (the text, the tool calls whole, usage). The request is ended when the
 * call ends early (interruption, idle timeout), which also ends a hung read.
 */
export const chatStreamOnce = <E>(
  target: Target,
  request: ChatRequest,
  idleTimeoutMs: number,
  onEvents: (events: ReadonlyArray<LlmStreamEvent>) => Effect.Effect<void, E>
): Effect.Effect<LlmFinished, LlmError | E> =>
  Effect.suspend(() => {
    const toError = toLlmError(target)
    let text = ""
    let usage: Usage | null = null
    let finishReason: string | null = null
    const calls = new Map<number, { id: string; name: string; arguments: string }>()

    const eventsOf = (chunk: ChatCompletionChunk, out: Array<LlmStreamEvent>) => {
      if (chunk.usage) usage = usageOf(chunk.usage)
      const choice = chunk.choices?.[0]
      if (!choice) return
      if (choice.finish_reason) finishReason = choice.finish_reason
      const delta = choice.delta
      if (!delta) return
      const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning
      if (typeof reasoning === "string" && reasoning.length > 0) out.push({ _tag: "ReasoningDelta", text: reasoning })
      if (typeof delta.content === "string" && delta.content.length > 0) {
        text += delta.content
        out.push({ _tag: "TextDelta", text: delta.content })
      }
      for (const call of delta.tool_calls ?? []) {
        const index = call.index ?? 0
        const entry = calls.get(index) ?? { id: "", name: "", arguments: "" }
        if (call.id) entry.id = call.id
        if (call.function?.name) entry.name += call.function.name
        const argumentsDelta = call.function?.arguments ?? ""
        entry.arguments += argumentsDelta
        calls.set(index, entry)
        out.push({
          _tag: "ToolCallDelta",
          index,
          ...(call.id ? { id: call.id } : {}),
          ...(call.function?.name ? { name: call.function.name } : {}),
          argumentsDelta
        })
      }
    }

    const names = toWireNames(request.tools, request.messages)
    const body = { ...chatBody(target, request, names), stream_options: { include_usage: true } }
    // Made when the timer fires, not per call: an error captures a stack trace.
    const idle = () => new LlmError({ kind: "timeout", detail: `The provider stopped sending (${target.id})` })

    // One region around the call rather than a scope: the request is ended, and the idle timer
    // cleared, when the call ends early (interruption, idle timeout) or fails.
    return Effect.acquireUseRelease(
      Effect.map(Effect.mapError(target.provider.client.openChatStream(body), toError), (stream) => ({
        stream,
        batches: batchesOf(stream, idleTimeoutMs, (error, timedOut) => (timedOut ? idle() : toError(error)))
      })),
      ({ batches }) =>
        Effect.gen(function*() {
          for (;;) {
            const batch = yield* batches.next
            if (batch === null) break
            const out: Array<LlmStreamEvent> = []
            for (const chunk of batch) eventsOf(chunk, out)
            if (out.length > 0) yield* onEvents(out)
          }
          return {
            _tag: "Finished",
            model: target.id,
            text,
            toolCalls: [...calls.entries()]
              .sort(([a], [b]) => a - b)
              .map(([index, call]) => names.toolCallBack({ id: call.id || `call_${index}`, name: call.name, arguments: call.arguments })),
            usage,
            finishReason
          } satisfies LlmFinished
        }),
      ({ stream, batches }) =>
        Effect.sync(() => {
          batches.close()
          stream.release()
        })
    )
  })

interface EmbeddingReply {
  readonly data?: ReadonlyArray<{ readonly index?: number; readonly embedding?: unknown }>
  readonly usage?: { readonly prompt_tokens?: number; readonly total_tokens?: number } | null
}

export const embedOnce = (target: Target, input: ReadonlyArray<string>) =>
  target.provider.client.embeddings({ model: target.model, input: [...input], encoding_format: "float" }).pipe(
    Effect.mapError(toLlmError(target)),
    Effect.flatMap((raw) => {
      const reply = raw as EmbeddingReply
      const data = reply?.data
      if (!Array.isArray(data) || data.length !== input.length || data.some((d) => !Array.isArray(d?.embedding))) {
        return Effect.fail(toLlmError(target)(new Error(`expected ${input.length} embeddings`)))
      }
      const embeddings = [...data]
        .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
        .map((d) => d.embedding as ReadonlyArray<number>)
      const usage = usageOf(reply.usage && typeof reply.usage === "object" ? { ...reply.usage, completion_tokens: 0 } : null)
      return Effect.succeed({ embeddings, usage })
    })
  )

/** What a speech-to-text engine answered: the text, and the language and length when it says them. */
export interface Transcribed {
  readonly text: string
  readonly language: string | null
  readonly durationSeconds: number | null
}

export const transcribeOnce = (target: Target, audio: Uint8Array, fileName: string, mimeType: string) =>
  target.provider.client.transcribe(target.model, audio, fileName, mimeType).pipe(
    Effect.mapError(toLlmError(target)),
    Effect.map((reply): Transcribed => {
      const fields = reply as { text?: unknown; language?: unknown; duration?: unknown }
      return {
        text: typeof fields.text === "string" ? fields.text : "",
        language: typeof fields.language === "string" && fields.language ? fields.language : null,
        durationSeconds: typeof fields.duration === "number" && Number.isFinite(fields.duration) && fields.duration >= 0
          ? fields.duration
          : null
      }
    })
  )
