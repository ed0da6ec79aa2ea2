/**
 * One call to one provider through the `openai` SDK, and the mapping of every SDK failure to an
 * `LlmError` whose detail is the provider's message with credentials removed. Retries, fallback and
 * usage are `Llm`'s.
 */
import { Effect, Option, Stream } from "effect"
import OpenAI, { toFile } from "openai"
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions"
import type { Stream as SdkStream } from "openai/streaming"
import { scrub } from "./KeyVault.ts"
import { LlmError, type ChatRequest, type LlmStreamEvent, type ToolCall, type Usage } from "./Model.ts"
import type { Target } from "./Providers.ts"

/** Seconds from Retry-After (seconds or an HTTP date) or retry-after-ms. */
const retryAfterSeconds = (headers: Headers | undefined): number | undefined => {
  if (!headers) return undefined
  const ms = Number(headers.get("retry-after-ms"))
  if (headers.get("retry-after-ms") !== null && Number.isFinite(ms) && ms >= 0) return ms / 1000
  const raw = headers.get("retry-after")
  if (raw === null) return undefined
  const seconds = Number(raw)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds
  const date = Date.parse(raw)
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000)
}

/** The provider's own words: the error body's message, else the SDK's message without its status prefix. */
const providerMessage = (error: InstanceType<typeof OpenAI.APIError>): string => {
  const body = error.error as { message?: unknown } | undefined
  if (body && typeof body.message === "string" && body.message.length > 0) return body.message
  return error.message.replace(/^\d{3}\s+/, "")
}

export const toLlmError = (target: Target) => (error: unknown): LlmError => {
  const clean = (message: string) => scrub(message, [target.provider.apiKey])
  const where = `${target.id}`
  if (error instanceof LlmError) return error
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new LlmError({ kind: "timeout", detail: `The provider did not answer in time (${where})` })
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new LlmError({ kind: "upstream", detail: clean(`Cannot reach the provider (${where}): ${error.message}`) })
  }
  if (error instanceof OpenAI.APIError) {
    const status = error.status
    const detail = clean(providerMessage(error))
    if (status === 429) {
      const after = retryAfterSeconds(error.headers)
      return new LlmError({ kind: "rate_limited", status, detail, ...(after !== undefined ? { retryAfterSeconds: after } : {}) })
    }
    if (status === 404) return new LlmError({ kind: "unknown_model", status, detail })
    if (status === 400 || status === 422) return new LlmError({ kind: "invalid_request", status, detail })
    if (status === undefined) return new LlmError({ kind: "upstream", detail }) // an error inside a stream
    return new LlmError({ kind: "upstream", status, detail })
  }
  // A body that is not what an OpenAI-compatible server sends (JSON that does not parse, say).
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
const chatBody = (target: Target, request: ChatRequest) => {
  const { stream: _stream, stream_options: _streamOptions, ...extra } = request.extra ?? {}
  return {
    ...extra,
    model: target.model,
    messages: request.messages,
    ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {})
  } as any
}

const usageOf = (usage: ChatCompletion["usage"] | null | undefined): Usage | null =>
  usage
    ? {
        prompt_tokens: usage.prompt_tokens ?? 0,
        completion_tokens: usage.completion_tokens ?? 0,
        total_tokens: usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)
      }
    : null

export interface ChatOutcome {
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: Usage | null
  readonly finishReason: string | null
}

export const chatOnce = (target: Target, request: ChatRequest): Effect.Effect<ChatOutcome, LlmError> =>
  Effect.tryPromise({
    try: (signal) => target.provider.client.chat.completions.create(chatBody(target, request), { signal }),
    catch: toLlmError(target)
  }).pipe(
    Effect.flatMap((completion: ChatCompletion) => {
      const choice = completion?.choices?.[0]
      if (!choice || typeof choice !== "object") {
        return Effect.fail(toLlmError(target)(new Error("the reply has no choices")))
      }
      return Effect.succeed({
        content: typeof choice.message?.content === "string" ? choice.message.content : "",
        toolCalls: (choice.message?.tool_calls ?? []).flatMap((call) =>
          call.type === "function" ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] : []
        ),
        usage: usageOf(completion.usage),
        finishReason: choice.finish_reason ?? null
      })
    })
  )

/**
 * One streamed completion: the deltas as they come, then `Finished`. The request is aborted when
 * the stream ends early (interruption, idle timeout), which also ends a hung read.
 */
export const chatStreamOnce = (target: Target, request: ChatRequest, idleTimeoutMs: number): Stream.Stream<LlmStreamEvent, LlmError> =>
  Stream.suspend(() => {
    const toError = toLlmError(target)
    let text = ""
    let usage: Usage | null = null
    let finishReason: string | null = null
    const calls = new Map<number, { id: string; name: string; arguments: string }>()

    const eventsOf = (chunk: ChatCompletionChunk): Array<LlmStreamEvent> => {
      if (chunk.usage) usage = usageOf(chunk.usage)
      const choice = chunk.choices?.[0]
      if (!choice) return []
      if (choice.finish_reason) finishReason = choice.finish_reason
      const delta = choice.delta as (ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown }) | undefined
      if (!delta) return []
      const out: Array<LlmStreamEvent> = []
      const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning
      if (typeof reasoning === "string" && reasoning.length > 0) out.push({ _tag: "ReasoningDelta", text: reasoning })
      if (typeof delta.content === "string" && delta.content.length > 0) {
        text += delta.content
        out.push({ _tag: "TextDelta", text: delta.content })
      }
      for (const call of delta.tool_calls ?? []) {
        const entry = calls.get(call.index) ?? { id: "", name: "", arguments: "" }
        if (call.id) entry.id = call.id
        if (call.function?.name) entry.name += call.function.name
        const argumentsDelta = call.function?.arguments ?? ""
        entry.arguments += argumentsDelta
        calls.set(call.index, entry)
        out.push({
          _tag: "ToolCallDelta",
          index: call.index,
          ...(call.id ? { id: call.id } : {}),
          ...(call.function?.name ? { name: call.function.name } : {}),
          argumentsDelta
        })
      }
      return out
    }

    const open = Effect.tryPromise({
      try: (signal) =>
        target.provider.client.chat.completions.create(
          { ...chatBody(target, request), stream: true, stream_options: { include_usage: true } },
          { signal }
        ) as unknown as Promise<SdkStream<ChatCompletionChunk>>,
      catch: toError
    })

    const chunks = Stream.unwrapScoped(
      Effect.gen(function* () {
        // Opening stays interruptible (acquire alone would not be): a cancel while the provider has
        // not answered yet aborts the request through its signal.
        const sdkStream = yield* Effect.acquireRelease(Effect.interruptible(open), (s) => Effect.sync(() => s.controller.abort()))
        // The idle timeout is one timer re-armed per chunk (a per-element stream timeout costs
        // more than the rest of the call): when it fires, the request is aborted, the pending
        // read fails, and the failure is reported as a timeout.
        let timedOut = false
        let timer: ReturnType<typeof setTimeout> | undefined
        const arm = () => {
          clearTimeout(timer)
          timer = setTimeout(() => {
            timedOut = true
            sdkStream.controller.abort()
          }, idleTimeoutMs)
        }
        yield* Effect.addFinalizer(() => Effect.sync(() => clearTimeout(timer)))
        arm()
        const idle = () => new LlmError({ kind: "timeout", detail: `The provider stopped sending (${target.id})` })
        const iterator = sdkStream[Symbol.asyncIterator]()
        return Stream.repeatEffectOption(
          Effect.tryPromise({ try: () => iterator.next(), catch: (e) => Option.some(timedOut ? idle() : toError(e)) }).pipe(
            Effect.flatMap((result) => {
              if (timedOut) return Effect.fail(Option.some(idle()))
              if (result.done) return Effect.fail(Option.none())
              arm()
              return Effect.succeed(result.value)
            })
          )
        )
      })
    )

    return chunks.pipe(
      Stream.mapConcat(eventsOf),
      Stream.concat(
        Stream.sync(
          (): LlmStreamEvent => ({
            _tag: "Finished",
            model: target.id,
            text,
            toolCalls: [...calls.entries()]
              .sort(([a], [b]) => a - b)
              .map(([index, call]) => ({ id: call.id || `call_${index}`, name: call.name, arguments: call.arguments })),
            usage,
            finishReason
          })
        )
      )
    )
  })

export const embedOnce = (target: Target, input: ReadonlyArray<string>) =>
  Effect.tryPromise({
    try: (signal) =>
      target.provider.client.embeddings.create({ model: target.model, input: [...input], encoding_format: "float" }, { signal }),
    catch: toLlmError(target)
  }).pipe(
    Effect.flatMap((reply) => {
      if (!Array.isArray(reply?.data) || reply.data.length !== input.length) {
        return Effect.fail(toLlmError(target)(new Error(`expected ${input.length} embeddings`)))
      }
      const embeddings = [...reply.data].sort((a, b) => a.index - b.index).map((d) => d.embedding as ReadonlyArray<number>)
      const usage: Usage | null = reply.usage
        ? { prompt_tokens: reply.usage.prompt_tokens, completion_tokens: 0, total_tokens: reply.usage.total_tokens }
        : null
      return Effect.succeed({ embeddings, usage })
    })
  )

export const transcribeOnce = (target: Target, audio: Uint8Array, fileName: string, mimeType: string) =>
  Effect.tryPromise({
    try: async (signal) => {
      const file = await toFile(audio, fileName, { type: mimeType })
      return target.provider.client.audio.transcriptions.create({ model: target.model, file }, { signal })
    },
    catch: toLlmError(target)
  }).pipe(Effect.map((reply) => ({ text: typeof reply?.text === "string" ? reply.text : "" })))
