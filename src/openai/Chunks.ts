/**
 * A turn as OpenAI's answers: the blocking `chat.completion`, or the `chat.completion.chunk`
 * frames of a stream. Pure: it reads Cairn's run events and the turn's outcome.
 */
import type { AgentEvent } from "../agent/Events.ts"
import type { TurnResult } from "../agent/Turn.ts"
import type { ChatCompletion } from "./Model.ts"

export interface CompletionIdentity {
  readonly id: string
  readonly created: number
  readonly model: string
}

const toolCallsOf = (result: TurnResult) =>
  result.toolCalls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } }))

export const finishReason = (result: TurnResult) => (result.toolCalls.length > 0 ? ("tool_calls" as const) : ("stop" as const))

const choiceOf = (result: TurnResult, index: number) => ({
  index,
  message: {
    role: "assistant" as const,
    content: result.text || (result.toolCalls.length > 0 ? null : ""),
    refusal: null,
    ...(result.toolCalls.length > 0 ? { tool_calls: toolCallsOf(result) } : {})
  },
  logprobs: null,
  finish_reason: finishReason(result)
})

const sum = (results: ReadonlyArray<TurnResult>, field: "prompt_tokens" | "completion_tokens" | "total_tokens") =>
  results.reduce((total, result) => total + result.usage[field], 0)

/** A chat.completion of one choice per turn (`n`), its usage the sum of theirs. */
export const completions = (identity: CompletionIdentity, results: ReadonlyArray<TurnResult>): ChatCompletion => ({
  id: identity.id,
  object: "chat.completion",
  created: identity.created,
  model: identity.model,
  choices: results.map(choiceOf),
  usage: results.length === 1
    ? results[0]!.usage
    : {
      prompt_tokens: sum(results, "prompt_tokens"),
      completion_tokens: sum(results, "completion_tokens"),
      total_tokens: sum(results, "total_tokens")
    }
})

export const completion = (identity: CompletionIdentity, result: TurnResult): ChatCompletion => completions(identity, [result])

/** One SSE frame. */
export const dataFrame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`
export const doneFrame = "data: [DONE]\n\n"

/**
 * The frames of one streamed turn. Text streams as it comes; each model call after the first that
 * speaks starts a new paragraph (the model speaks again after a tool, or a fallback model starts
 * over: what the failed one said cannot be taken back). The caller's tool calls and the finish
 * reason come once the turn is over, then usage when asked for, then `[DONE]`. A failed turn ends
 * with OpenAI's error object as the last frame, which the OpenAI clients raise.
 */
export const makeChunkStream = (identity: CompletionIdentity, includeUsage: boolean) => {
  let started = false
  let streamedAny = false
  // Whether the current model call has streamed text: if the last one has not, its answer came whole at the end.
  let streamedInCall = false

  const chunk = (delta: Record<string, unknown>, finish: "stop" | "tool_calls" | null = null) => ({
    id: identity.id,
    object: "chat.completion.chunk",
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {})
  })

  const opening = (): Array<string> => {
    if (started) return []
    started = true
    return [dataFrame(chunk({ role: "assistant", content: "" }))]
  }

  const text = (delta: string): Array<string> => {
    if (!delta) return []
    const separator = streamedAny && !streamedInCall ? "\n\n" : ""
    streamedAny = true
    streamedInCall = true
    return [...opening(), dataFrame(chunk({ content: separator + delta }))]
  }

  const onEvent = (event: AgentEvent): Array<string> => {
    switch (event.type) {
      case "assistant_text":
        return text(event.delta)
      // Each model call begins with its context budget; a fallback model begins its answer anew.
      case "context_budget":
      case "fallback":
        streamedInCall = false
        return opening()
      default:
        return []
    }
  }

  const onComplete = (result: TurnResult): Array<string> => {
    const frames = [...opening()]
    if (!streamedInCall && result.text) frames.push(...text(result.text))
    if (result.toolCalls.length > 0) {
      frames.push(dataFrame(chunk({ tool_calls: toolCallsOf(result).map((call, index) => ({ index, ...call })) })))
    }
    frames.push(dataFrame(chunk({}, finishReason(result))))
    if (includeUsage) {
      frames.push(
        dataFrame({
          id: identity.id,
          object: "chat.completion.chunk",
          created: identity.created,
          model: identity.model,
          choices: [],
          usage: result.usage
        })
      )
    }
    frames.push(doneFrame)
    return frames
  }

  const onFailure = (error: { readonly message: string; readonly type: string; readonly code: string | null }): Array<string> => [
    ...opening(),
    dataFrame({ error: { message: error.message, type: error.type, param: null, code: error.code } })
  ]

  return { onEvent, onComplete, onFailure }
}
