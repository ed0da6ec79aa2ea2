/**
 * The Anthropic family: Claude through Anthropic's own SDK (`@anthropic-ai/sdk`), blocking and
 * streamed, with extended thinking, prompt caching and Anthropic's usage and errors mapped onto
 * Cairn's (`AnthropicWire.ts` has the shapes). Anthropic serves no embeddings and no speech to
 * text: those calls fail as invalid requests naming the model to use instead.
 */
import Anthropic from "@anthropic-ai/sdk"
import { Effect } from "effect"
import { cairnVersion } from "../contract/Version.ts"
import { scrub } from "../secrets/Vault.ts"
import { type AnthropicOptions, finishReasonOf, messagesBody, readContent, stateOf, usageOf } from "./AnthropicWire.ts"
import { type Family, type FamilyTarget, retryAfterSeconds, statusError, unreadableAnswer } from "./Family.ts"
import {
  type ChatRequest,
  LlmError,
  type LlmFinished,
  type LlmStreamEvent,
  type ThinkingBlock,
  type ToolCall,
  type Usage
} from "./Model.ts"
import { streamEvents } from "./SdkStream.ts"
import { secretsOf } from "./Secrets.ts"
import { toWireNames } from "./ToolNames.ts"

export interface AnthropicConnection extends AnthropicOptions {
  readonly baseUrl: string
  readonly apiKey: string | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

const headersRecord = (headers: Headers | undefined): Record<string, string> => (headers ? Object.fromEntries(headers.entries()) : {})

/** Anthropic's failures as Cairn's: 429 and 529 (overloaded) retried, context overflow may fall back. */
export const anthropicError = (target: FamilyTarget) => (error: unknown): LlmError => {
  if (error instanceof LlmError) return error
  const clean = (message: string) => scrub(message, secretsOf(target.provider))
  if (error instanceof Anthropic.APIConnectionTimeoutError) {
    return new LlmError({ kind: "timeout", detail: `The provider did not answer in time (${target.id})` })
  }
  if (error instanceof Anthropic.APIConnectionError) {
    return new LlmError({ kind: "upstream", detail: clean(`Cannot reach the provider (${target.id}): ${error.message}`) })
  }
  if (error instanceof Anthropic.APIError) {
    const detail = clean(error.apiMessage ?? error.message)
    // An error event inside a stream has no status: its type says what it was.
    const status = error.status ?? (error.type === "overloaded_error" ? 529 : error.type === "rate_limit_error" ? 429 : 500)
    return statusError(status, detail, status === 429 ? retryAfterSeconds(headersRecord(error.headers)) : undefined)
  }
  return unreadableAnswer(target, error, clean)
}

const unsupported = (target: FamilyTarget, what: string) =>
  new LlmError({
    kind: "invalid_request",
    detail: `${target.id} is an Anthropic model, and Anthropic offers no ${what}: use a model of another provider for it`
  })

/** One streamed call: the SDK's events folded into Cairn's deltas and, at the end, `Finished`. */
const streamed = <E>(
  sdk: Anthropic,
  connection: AnthropicConnection,
  target: FamilyTarget,
  request: ChatRequest,
  idleTimeoutMs: number,
  onEvents: (events: ReadonlyArray<LlmStreamEvent>) => Effect.Effect<void, E>
): Effect.Effect<LlmFinished, LlmError | E> =>
  Effect.suspend(() => {
    const names = toWireNames(request.tools, request.messages)
    const body = { ...messagesBody(target.model, request, names, connection), stream: true as const }
    let text = ""
    let usage: Usage | null = null
    let wireUsage: Parameters<typeof usageOf>[0] = {}
    let stop: string | null = null
    const thinking: Array<ThinkingBlock> = []
    // Content blocks by their index; tool calls numbered in their order.
    const blocks = new Map<
      number,
      { kind: string; tool?: number; id?: string; name?: string; args: string; thinking: string; signature: string }
    >()
    const calls: Array<{ id: string; name: string; args: string }> = []
    const handle = (event: Anthropic.RawMessageStreamEvent, out: Array<LlmStreamEvent>) => {
      switch (event.type) {
        case "message_start":
          wireUsage = { ...event.message.usage }
          usage = usageOf(wireUsage)
          break
        case "content_block_start": {
          const block = event.content_block
          const entry = { kind: block.type as string, args: "", thinking: "", signature: "" }
          if (block.type === "tool_use") {
            const tool = calls.push({ id: block.id, name: block.name, args: "" }) - 1
            blocks.set(event.index, { ...entry, tool, id: block.id, name: block.name })
            out.push({
              _tag: "ToolCallDelta",
              index: tool,
              id: block.id,
              name: names.toolCallBack({ id: block.id, name: block.name, arguments: "" }).name,
              argumentsDelta: ""
            })
          } else if (block.type === "redacted_thinking") {
            thinking.push({ type: "redacted_thinking", data: block.data })
            blocks.set(event.index, entry)
          } else blocks.set(event.index, entry)
          break
        }
        case "content_block_delta": {
          const entry = blocks.get(event.index)
          const delta = event.delta
          if (delta.type === "text_delta") {
            text += delta.text
            out.push({ _tag: "TextDelta", text: delta.text })
          } else if (delta.type === "thinking_delta") {
            if (entry) entry.thinking += delta.thinking
            out.push({ _tag: "ReasoningDelta", text: delta.thinking })
          } else if (delta.type === "signature_delta") {
            if (entry) entry.signature += delta.signature
          } else if (delta.type === "input_json_delta" && entry?.tool !== undefined) {
            calls[entry.tool]!.args += delta.partial_json
            out.push({ _tag: "ToolCallDelta", index: entry.tool, argumentsDelta: delta.partial_json })
          }
          break
        }
        case "content_block_stop": {
          const entry = blocks.get(event.index)
          if (entry?.kind === "thinking") thinking.push({ type: "thinking", thinking: entry.thinking, signature: entry.signature })
          break
        }
        case "message_delta":
          stop = event.delta.stop_reason ?? stop
          // Cumulative counts: the last one is the call's.
          wireUsage = { ...wireUsage, ...Object.fromEntries(Object.entries(event.usage).filter(([, v]) => v !== null && v !== undefined)) }
          usage = usageOf(wireUsage)
          break
        default:
          break
      }
    }
    const toError = anthropicError(target)
    return streamEvents({
      open: (signal) => sdk.messages.create(body, { signal, timeout: connection.timeoutMs }),
      idleTimeoutMs,
      idle: () => new LlmError({ kind: "timeout", detail: `The provider stopped sending (${target.id})` }),
      toError,
      handle,
      onEvents
    }).pipe(
      Effect.map((): LlmFinished => {
        const toolCalls: Array<ToolCall> = calls.map((call) =>
          names.toolCallBack({ id: call.id, name: call.name, arguments: call.args.trim() === "" ? "{}" : call.args })
        )
        const providerState = stateOf(thinking)
        return {
          _tag: "Finished",
          model: target.id,
          text,
          toolCalls,
          usage,
          finishReason: finishReasonOf(stop),
          ...(providerState ? { providerState } : {})
        }
      })
    )
  })

export const anthropicFamily = (connection: AnthropicConnection): Family => {
  const sdk = new Anthropic({
    // The SDK insists on a key; a server that takes none (a local gateway) is sent a placeholder.
    apiKey: connection.apiKey ?? "none",
    baseURL: connection.baseUrl.replace(/\/v1\/?$/, ""),
    maxRetries: 0,
    timeout: connection.timeoutMs,
    defaultHeaders: { "user-agent": `cairn/${cairnVersion}`, ...connection.headers }
  })
  return {
    chat: (target, request) => {
      const names = toWireNames(request.tools, request.messages)
      return Effect.tryPromise({
        try: (signal) => sdk.messages.create(messagesBody(target.model, request, names, connection), { signal }),
        catch: anthropicError(target)
      }).pipe(
        Effect.map((message) => {
          const read = readContent(message.content ?? [], names)
          return {
            content: read.text,
            toolCalls: read.toolCalls,
            usage: usageOf(message.usage),
            finishReason: finishReasonOf(message.stop_reason),
            ...(read.reasoning ? { reasoning: read.reasoning } : {}),
            ...(read.providerState ? { providerState: read.providerState } : {})
          }
        })
      )
    },
    chatStream: (target, request, idleTimeoutMs, onEvents) => streamed(sdk, connection, target, request, idleTimeoutMs, onEvents),
    embed: (target) => Effect.fail(unsupported(target, "embeddings")),
    transcribe: (target) => Effect.fail(unsupported(target, "speech to text")),
    models: (provider, timeoutMs) =>
      Effect.tryPromise({
        try: async (signal) => {
          const ids: Array<string> = []
          for await (const model of sdk.models.list({ limit: 100 }, { signal, timeout: timeoutMs })) ids.push(model.id)
          return ids
        },
        catch: (error) => scrub(error instanceof Error ? error.message : String(error), secretsOf(provider))
      })
  }
}
