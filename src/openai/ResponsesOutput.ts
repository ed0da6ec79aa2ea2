/**
 * A turn as the Responses API's answers: the blocking response object, or the events of a stream
 * (`response.created`, `response.in_progress`, the output items with their parts and deltas,
 * `response.completed` or `response.failed`), each with its `sequence_number`. Pure: it reads
 * Cairn's run events and the turn's outcome.
 */
import type { AgentEvent } from "../agent/Events.ts"
import type { TurnResult } from "../agent/Turn.ts"
import type { Usage } from "../providers/Model.ts"
import type { responseIds } from "./ResponsesInput.ts"
import type { OutputItem, ResponseObject } from "./ResponsesModel.ts"

/** What a response says of its request, the same from its first event to its last. */
export interface ResponseIdentity {
  readonly ids: ReturnType<typeof responseIds>
  readonly createdAt: number
  readonly model: string
  readonly instructions: string | null
  readonly previousResponseId: string | null
  readonly store: boolean
  readonly tools: ReadonlyArray<unknown>
}

export const responseUsage = (usage: Usage) => ({
  input_tokens: usage.prompt_tokens,
  input_tokens_details: { cached_tokens: usage.cache_read_tokens ?? 0 },
  output_tokens: usage.completion_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.total_tokens
})

type Status = ResponseObject["status"]

/** The response object in a state: OpenAI's fields, with those a bot decides for itself at their defaults. */
export const responseObject = (
  identity: ResponseIdentity,
  status: Status,
  output: ReadonlyArray<OutputItem>,
  usage: Usage | null,
  error: { readonly code: string; readonly message: string } | null = null
) => ({
  id: identity.ids.response,
  object: "response" as const,
  created_at: identity.createdAt,
  status,
  error,
  incomplete_details: null,
  instructions: identity.instructions,
  max_output_tokens: null,
  model: identity.model,
  output,
  parallel_tool_calls: true,
  previous_response_id: identity.previousResponseId,
  reasoning: { effort: null, summary: null },
  store: identity.store,
  temperature: null,
  text: { format: { type: "text" } },
  tool_choice: "auto",
  tools: identity.tools,
  top_p: null,
  truncation: "disabled",
  usage: usage ? responseUsage(usage) : null,
  user: null,
  metadata: {}
})

const messageItem = (identity: ResponseIdentity, text: string, status: "in_progress" | "completed"): OutputItem => ({
  type: "message",
  id: identity.ids.message,
  status,
  role: "assistant",
  content: status === "completed" ? [{ type: "output_text", text, annotations: [] }] : []
})

const callItems = (identity: ResponseIdentity, result: TurnResult): Array<OutputItem> =>
  result.toolCalls.map((call, index) => ({
    type: "function_call",
    id: identity.ids.call(index),
    status: "completed",
    call_id: call.id,
    name: call.name,
    arguments: call.arguments
  }))

/** The output of a finished turn: its text as a message (none when it only called tools), then its calls. */
export const outputOf = (identity: ResponseIdentity, result: TurnResult, text = result.text): Array<OutputItem> => [
  ...(text || result.toolCalls.length === 0 ? [messageItem(identity, text, "completed")] : []),
  ...callItems(identity, result)
]

export const completedResponse = (identity: ResponseIdentity, result: TurnResult) =>
  responseObject(identity, "completed", outputOf(identity, result), result.usage)

/** One SSE event, named as its type. */
const eventFrame = (event: { readonly type: string; readonly sequence_number: number }) =>
  `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`

/**
 * The events of one streamed turn. Text streams as it comes into one message item; each model call
 * after the first that speaks starts a new paragraph (as the chat chunks do). The caller's function
 * calls come once the turn is over, each as an item with its arguments whole, then the completed
 * response. A failed turn ends with `response.failed`.
 */
export const makeResponseEvents = (identity: ResponseIdentity) => {
  let sequence = 0
  let started = false
  let text = ""
  let messageOpen = false
  let streamedInCall = false
  const part = { type: "output_text", text: "", annotations: [] }

  const frame = (event: Record<string, unknown> & { readonly type: string }) => eventFrame({ ...event, sequence_number: sequence++ })

  const opening = (): Array<string> => {
    if (started) return []
    started = true
    const response = responseObject(identity, "in_progress", [], null)
    return [frame({ type: "response.created", response }), frame({ type: "response.in_progress", response })]
  }

  const at = { item_id: identity.ids.message, output_index: 0, content_index: 0 }

  const openMessage = (): Array<string> => {
    const frames = opening()
    if (messageOpen) return frames
    messageOpen = true
    frames.push(
      frame({ type: "response.output_item.added", output_index: 0, item: messageItem(identity, "", "in_progress") }),
      frame({ type: "response.content_part.added", ...at, part })
    )
    return frames
  }

  const write = (delta: string): Array<string> => {
    if (!delta) return []
    const frames = openMessage()
    const separated = text && !streamedInCall ? `\n\n${delta}` : delta
    text += separated
    streamedInCall = true
    frames.push(frame({ type: "response.output_text.delta", ...at, delta: separated, logprobs: [] }))
    return frames
  }

  const onEvent = (event: AgentEvent): Array<string> => {
    switch (event.type) {
      case "assistant_text":
        return write(event.delta)
      case "context_budget":
      case "fallback":
        streamedInCall = false
        return opening()
      default:
        return []
    }
  }

  const onComplete = (result: TurnResult): Array<string> => {
    const frames = opening()
    if (!streamedInCall && result.text) frames.push(...write(result.text))
    // An answer without text or calls is still a message, as OpenAI's is.
    if (result.toolCalls.length === 0) frames.push(...openMessage())
    const output = outputOf(identity, result, text)
    if (messageOpen) {
      frames.push(
        frame({ type: "response.output_text.done", ...at, text, logprobs: [] }),
        frame({ type: "response.content_part.done", ...at, part: { ...part, text } }),
        frame({ type: "response.output_item.done", output_index: 0, item: output[0] })
      )
    }
    output.forEach((item, outputIndex) => {
      if (item.type !== "function_call") return
      const base = { item_id: item.id, output_index: outputIndex }
      frames.push(
        frame({ type: "response.output_item.added", output_index: outputIndex, item: { ...item, status: "in_progress", arguments: "" } }),
        frame({ type: "response.function_call_arguments.delta", ...base, delta: item.arguments }),
        frame({ type: "response.function_call_arguments.done", ...base, name: item.name, arguments: item.arguments }),
        frame({ type: "response.output_item.done", output_index: outputIndex, item })
      )
    })
    frames.push(frame({ type: "response.completed", response: responseObject(identity, "completed", output, result.usage) }))
    return frames
  }

  const onFailure = (error: { readonly message: string; readonly code: string | null }): Array<string> => [
    ...opening(),
    frame({
      type: "response.failed",
      response: responseObject(identity, "failed", [], null, { code: error.code ?? "server_error", message: error.message })
    })
  ]

  return { onEvent, onComplete, onFailure }
}
