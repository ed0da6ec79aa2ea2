/**
 * Cairn's chat request in Anthropic's Messages shape, and Anthropic's answer back in Cairn's.
 *
 * What maps to what:
 * - system messages at the start become `system`; a system message later in the history (a notice
 *   of the loop's) becomes user text marked as the system's, since Messages has no such role there;
 * - images travel as base64 (a `data:` URL) or URL image blocks; audio, which Claude does not take,
 *   as a short text saying it was left out;
 * - tool calls become `tool_use` blocks with their arguments as an object, tool results the
 *   `tool_result` blocks of one user message (consecutive same-role messages are merged: the API
 *   wants them alternating);
 * - thinking is sent back only as Anthropic's own signed blocks of the current tool loop
 *   (`providerState`); a loop that another family began runs without thinking, which the API would
 *   otherwise refuse;
 * - prompt caching marks the tools, the system prompt and the last two user messages (four
 *   breakpoints, the API's most): each call reads the prefix the call before it wrote.
 */
import type Anthropic from "@anthropic-ai/sdk"
import { argumentsObject, dataUrlParts, textOf, tokens } from "./Family.ts"
import type { ChatMessage, ChatRequest, ContentPart, ProviderState, ThinkingBlock, ToolCall, Usage } from "./Model.ts"
import type { WireNames } from "./ToolNames.ts"

type Block = Anthropic.ContentBlockParam
type WireMessage = { role: "user" | "assistant"; content: Array<Block> }

export const anthropicFamilyName = "anthropic"

/** The smallest thinking budget the API takes. */
export const minThinkingBudget = 1024

const ephemeral = { type: "ephemeral" } as const

const imageBlock = (url: string): Block => {
  const inline = dataUrlParts(url)
  if (inline) {
    return {
      type: "image",
      source: { type: "base64", media_type: inline.mediaType as Anthropic.Base64ImageSource["media_type"], data: inline.data }
    }
  }
  return { type: "image", source: { type: "url", url } }
}

const partBlock = (part: ContentPart): Block => {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "image_url":
      return imageBlock(part.image_url.url)
    case "input_audio":
      return { type: "text", text: "[A voice message was left out: this model does not take audio.]" }
  }
}

const contentBlocks = (content: ChatMessage["content"]): Array<Block> => {
  if (content === null) return []
  if (typeof content === "string") return content.length > 0 ? [{ type: "text", text: content }] : []
  return content.map(partBlock)
}

const thinkingBlocks = (state: ProviderState | undefined): Array<Block> =>
  state?.family === anthropicFamilyName && state.thinking
    ? state.thinking.map((block): Block =>
      block.type === "thinking"
        ? { type: "thinking", thinking: block.thinking, signature: block.signature }
        : { type: "redacted_thinking", data: block.data }
    )
    : []

const assistantBlocks = (message: ChatMessage, withThinking: boolean): Array<Block> => [
  ...(withThinking ? thinkingBlocks(message.providerState) : []),
  ...contentBlocks(message.content),
  ...(message.tool_calls ?? []).map((call): Block => ({
    type: "tool_use",
    id: call.id,
    name: call.function.name,
    input: argumentsObject(call.function.arguments)
  }))
]

/** Whether the history's open tool loop (its last assistant message calling tools) carries Anthropic's signed thinking. */
const loopHasThinking = (messages: ReadonlyArray<ChatMessage>) => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role === "user") return true
    if (message.role === "assistant") {
      if (!message.tool_calls || message.tool_calls.length === 0) return true
      return thinkingBlocks(message.providerState).length > 0
    }
  }
  return true
}

/** Appends to the last message when it has the same role (the API wants roles alternating). */
const push = (out: Array<WireMessage>, role: WireMessage["role"], blocks: Array<Block>) => {
  if (blocks.length === 0) return
  const last = out[out.length - 1]
  if (last && last.role === role) last.content.push(...blocks)
  else out.push({ role, content: blocks })
}

const markLastBlock = (message: WireMessage | undefined) => {
  const last = message?.content[message.content.length - 1]
  if (last && last.type !== "thinking" && last.type !== "redacted_thinking") {
    ;(last as { cache_control?: typeof ephemeral }).cache_control = ephemeral
  }
}

export interface AnthropicOptions {
  readonly defaultMaxTokens: number
  readonly promptCaching: boolean
}

/** The Messages request body for `request` (tools and history already in wire names). */
export const messagesBody = (
  model: string,
  request: ChatRequest,
  names: WireNames,
  options: AnthropicOptions
): Anthropic.MessageCreateParamsNonStreaming => {
  const budget = request.thinkingBudgetTokens ?? 0
  const thinking = budget >= minThinkingBudget && loopHasThinking(names.messages)
  const system: Array<Anthropic.TextBlockParam> = []
  const messages: Array<WireMessage> = []
  for (const message of names.messages) {
    switch (message.role) {
      case "system": {
        const text = textOf(message.content)
        if (messages.length === 0) system.push({ type: "text", text })
        else push(messages, "user", [{ type: "text", text: `[System notice] ${text}` }])
        break
      }
      case "user":
        push(messages, "user", contentBlocks(message.content))
        break
      case "assistant":
        push(messages, "assistant", assistantBlocks(message, thinking))
        break
      case "tool":
        push(messages, "user", [{
          type: "tool_result",
          tool_use_id: message.tool_call_id ?? "",
          content: typeof message.content === "string" ? message.content : contentBlocks(message.content)
        } as Block])
        break
    }
  }
  const tools: Array<Anthropic.Tool> = (names.tools ?? []).map((tool) => ({
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    input_schema: { type: "object", ...tool.function.parameters } as Anthropic.Tool.InputSchema
  }))
  if (options.promptCaching) {
    const lastTool = tools[tools.length - 1]
    if (lastTool) lastTool.cache_control = ephemeral
    const lastSystem = system[system.length - 1]
    if (lastSystem) lastSystem.cache_control = ephemeral
    const users = messages.filter((m) => m.role === "user")
    markLastBlock(users[users.length - 1])
    markLastBlock(users[users.length - 2])
  }
  const answerTokens = request.max_tokens ?? options.defaultMaxTokens
  // Messages has no JSON mode: an answer's JSON is read tolerantly (JsonAnswer.ts) instead.
  const { stream: _stream, response_format: _format, ...extra } = request.extra ?? {}
  return {
    ...extra,
    model,
    max_tokens: thinking ? answerTokens + budget : answerTokens,
    messages,
    ...(system.length > 0 ? { system } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    // Thinking takes no temperature but the default.
    ...(request.temperature !== undefined && !thinking ? { temperature: request.temperature } : {}),
    ...(thinking ? { thinking: { type: "enabled", budget_tokens: budget } } : {})
  } as Anthropic.MessageCreateParamsNonStreaming
}

/** Anthropic's stop reasons in the chat-completions words the rest of Cairn uses. */
export const finishReasonOf = (stop: string | null | undefined): string | null => {
  switch (stop) {
    case undefined:
    case null:
      return null
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
      return "stop"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool_calls"
    case "refusal":
      return "content_filter"
    default:
      return stop
  }
}

interface WireUsage {
  readonly input_tokens?: number | null
  readonly output_tokens?: number | null
  readonly cache_creation_input_tokens?: number | null
  readonly cache_read_input_tokens?: number | null
}

const count = (value: number | null | undefined) => tokens(value) ?? 0

/** Anthropic's usage: `input_tokens` leaves out the cached ones, which Cairn's prompt count includes. */
export const usageOf = (usage: WireUsage | null | undefined): Usage | null => {
  if (!usage) return null
  const read = count(usage.cache_read_input_tokens)
  const write = count(usage.cache_creation_input_tokens)
  const prompt = count(usage.input_tokens) + read + write
  const completion = count(usage.output_tokens)
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(read > 0 ? { cache_read_tokens: read } : {}),
    ...(write > 0 ? { cache_write_tokens: write } : {})
  }
}

/** A tool_use block's input as the arguments text Cairn keeps. */
export const argumentsText = (input: unknown) => JSON.stringify(input ?? {})

/** The answer's content blocks: its text, thinking, tool calls and the state to send back. */
export const readContent = (content: ReadonlyArray<Anthropic.ContentBlock>, names: WireNames) => {
  let text = ""
  let reasoning = ""
  const thinking: Array<ThinkingBlock> = []
  const toolCalls: Array<ToolCall> = []
  for (const block of content) {
    switch (block.type) {
      case "text":
        text += block.text
        break
      case "thinking":
        reasoning += block.thinking
        thinking.push({ type: "thinking", thinking: block.thinking, signature: block.signature })
        break
      case "redacted_thinking":
        thinking.push({ type: "redacted_thinking", data: block.data })
        break
      case "tool_use":
        toolCalls.push(names.toolCallBack({ id: block.id, name: block.name, arguments: argumentsText(block.input) }))
        break
      default:
        break
    }
  }
  return { text, reasoning, toolCalls, providerState: stateOf(thinking) }
}

export const stateOf = (thinking: ReadonlyArray<ThinkingBlock>): ProviderState | undefined =>
  thinking.length > 0 ? { family: anthropicFamilyName, thinking } : undefined
