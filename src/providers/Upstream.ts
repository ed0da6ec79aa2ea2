/**
 * The OpenAI-compatible family: one call to one provider over its `OpenAiClient` (the `openai` SDK
 * and a direct stream), and the mapping of every wire failure to an `LlmError` whose detail is the
 * provider's message with credentials removed. Retries, fallback and usage are `Llm`'s.
 */
import { Effect } from "effect"
import { scrub } from "../secrets/Vault.ts"
import { batchesOf } from "./ChunkBatches.ts"
import { type ChatOutcome, type Family, type FamilyTarget, retryAfterSeconds, statusError, tokens, type Transcribed } from "./Family.ts"
import { type ChatRequest, LlmError, type LlmFinished, type LlmStreamEvent, type Usage } from "./Model.ts"
import { nodeFetch } from "./NodeFetch.ts"
import { type OpenAiClient, WireError } from "./OpenAiClient.ts"
import { secretsOf } from "./Secrets.ts"
import { splitThinking, ThinkSplitter } from "./ThinkTags.ts"
import { toWireNames, type WireNames } from "./ToolNames.ts"

/** The parts of OpenAI's chat completion objects that are read here (anything may be missing). */
interface WireUsage {
  readonly prompt_tokens?: number
  readonly completion_tokens?: number
  readonly total_tokens?: number
  readonly prompt_tokens_details?: { readonly cached_tokens?: number } | null
}
interface WireToolCall {
  readonly index?: number
  readonly id?: string
  readonly type?: string
  readonly function?: { readonly name?: string; readonly arguments?: string }
}
interface ChatCompletion {
  readonly choices?: ReadonlyArray<{
    readonly message?: {
      readonly content?: unknown
      readonly reasoning_content?: unknown
      readonly reasoning?: unknown
      readonly tool_calls?: ReadonlyArray<WireToolCall> | null
    }
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

export const toLlmError = (target: FamilyTarget) => (error: unknown): LlmError => {
  const clean = (message: string) => scrub(message, secretsOf(target.provider))
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
        return statusError(status, clean(error.message), status === 429 ? retryAfterSeconds(error.headers) : undefined)
      }
    }
  }
  // A body that is not what an OpenAI-compatible server sends (a reply without choices, say).
  const message = error instanceof Error ? error.message : String(error)
  return new LlmError({ kind: "upstream", status: 200, detail: clean(`Malformed response from the provider (${where}): ${message}`) })
}

export { isRetryable } from "./Family.ts"

/**
 * The request body: `extra` first, so provider-specific fields pass untouched, then ours, which it
 * cannot override (model, messages, streaming).
 */
const chatBody = (target: FamilyTarget, request: ChatRequest, names: WireNames) => {
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

const usageOf = (usage: WireUsage | null | undefined): Usage | null => {
  if (!usage || typeof usage !== "object") return null
  const prompt = tokens(usage.prompt_tokens) ?? 0
  const completion = tokens(usage.completion_tokens) ?? 0
  const cached = tokens(usage.prompt_tokens_details?.cached_tokens)
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: tokens(usage.total_tokens) ?? prompt + completion,
    ...(cached ? { cache_read_tokens: Math.min(cached, prompt) } : {})
  }
}

const chatOnce = (client: OpenAiClient) => (target: FamilyTarget, request: ChatRequest): Effect.Effect<ChatOutcome, LlmError> => {
  // Tool names the provider would refuse travel as stand-ins (ToolNames.ts).
  const names = toWireNames(request.tools, request.messages)
  return client.chat(chatBody(target, request, names)).pipe(
    Effect.mapError(toLlmError(target)),
    Effect.flatMap((reply) => {
      const completion = reply as ChatCompletion
      const choice = completion?.choices?.[0]
      if (!choice || typeof choice !== "object") {
        return Effect.fail(toLlmError(target)(new Error("the reply has no choices")))
      }
      const message = choice.message
      const stated = typeof message?.reasoning_content === "string" ? message.reasoning_content : message?.reasoning
      // A local model's `<think>…</think>` is its reasoning, not its answer.
      const { answer, thinking } = splitThinking(typeof message?.content === "string" ? message.content : "")
      const reasoning = [typeof stated === "string" ? stated : "", thinking].filter((part) => part.length > 0).join("\n")
      return Effect.succeed({
        content: answer,
        ...(reasoning ? { reasoning } : {}),
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
 * One streamed completion: its deltas handed to `onEvents` a batch at a time, in order, as they
 * come; answers `Finished` (the text, the tool calls whole, usage). The request is ended when the
 * call ends early (interruption, idle timeout), which also ends a hung read.
 */
const chatStreamOnce = (client: OpenAiClient) =>
<E>(
  target: FamilyTarget,
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
    // A local model's opening `<think>…</think>` is its reasoning (ThinkTags.ts).
    const think = new ThinkSplitter()

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
        for (const part of think.push(delta.content)) {
          if (part.thinking) out.push({ _tag: "ReasoningDelta", text: part.text })
          else {
            text += part.text
            out.push({ _tag: "TextDelta", text: part.text })
          }
        }
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
      Effect.map(Effect.mapError(client.openChatStream(body), toError), (stream) => ({
        stream,
        batches: batchesOf<ChatCompletionChunk>(stream, idleTimeoutMs, (error, timedOut) => (timedOut ? idle() : toError(error)))
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
          const rest = think.flush().map((part): LlmStreamEvent => {
            if (part.thinking) return { _tag: "ReasoningDelta", text: part.text }
            text += part.text
            return { _tag: "TextDelta", text: part.text }
          })
          if (rest.length > 0) yield* onEvents(rest)
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

const embedOnce = (client: OpenAiClient) => (target: FamilyTarget, input: ReadonlyArray<string>) =>
  client.embeddings({ model: target.model, input: [...input], encoding_format: "float" }).pipe(
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

const transcribeOnce = (client: OpenAiClient) => (target: FamilyTarget, audio: Uint8Array, fileName: string, mimeType: string) =>
  client.transcribe(target.model, audio, fileName, mimeType).pipe(
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

/** Ollama's own list (`GET /api/tags` at the server's root), for an Ollama older than its `/v1/models`. */
const ollamaTags = (provider: FamilyTarget["provider"], timeoutMs: number) =>
  Effect.tryPromise({
    try: async (signal) => {
      const root = new URL(provider.baseUrl.replace(/\/v1\/?$/, "/"))
      const response = await nodeFetch(new URL("api/tags", root), { signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) })
      if (!response.ok) throw new Error(`${response.status} from /api/tags`)
      const models = ((await response.json()) as { models?: unknown })?.models
      if (!Array.isArray(models)) throw new Error("/api/tags listed no models")
      return models.flatMap((m) => (typeof m?.name === "string" ? [m.name as string] : []))
    },
    catch: (error) => error
  })

/** The model ids of the provider's `/models`, else of Ollama's `/api/tags`. */
const listModels = (client: OpenAiClient) => (provider: FamilyTarget["provider"], timeoutMs: number) =>
  client.models(timeoutMs).pipe(
    Effect.map((reply) => {
      const data = (reply as { data?: unknown })?.data
      return Array.isArray(data) ? data.flatMap((m) => (typeof m?.id === "string" ? [m.id as string] : [])) : []
    }),
    Effect.catchAll((error) => Effect.mapError(ollamaTags(provider, timeoutMs), () => error.message)),
    Effect.mapError((message) => scrub(message, secretsOf(provider)))
  )

/** The OpenAI-compatible family over one connection. */
export const openAiFamily = (client: OpenAiClient): Family => ({
  chat: chatOnce(client),
  chatStream: chatStreamOnce(client),
  embed: embedOnce(client),
  transcribe: transcribeOnce(client),
  models: listModels(client)
})
