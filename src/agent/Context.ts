/**
 * Context assembly: the system prompt (bot prompt, one-shot preamble, skills, channel), then the
 * session's history trimmed to the model's budget, then the new user message. Token counts are
 * estimates (about four characters a token), which is what the budget needs.
 */
import type { Bot } from "../bots/Model.ts"
import type { ChatMessage, ProviderState } from "../providers/Model.ts"
import { imageUrlOf, modelAudioOf } from "../sessions/Attachments.ts"
import type { HistoryRow } from "../sessions/Repo.ts"
import type { Skill } from "../skills/Skills.ts"

export const estimateTokens = (text: string | null | undefined) => Math.ceil((text?.length ?? 0) / 4)

/** What an image costs in a context, about: a high-detail image of a few tiles at OpenAI's rates. */
export const imageTokens = 1_000

/** Audio costs about 25 tokens a second; a second of compressed speech is about 20 kB of base64. */
const audioTokens = (base64: string) => Math.ceil(base64.length / 800)

const contentTokens = (content: ChatMessage["content"]) =>
  typeof content === "string" || content === null
    ? estimateTokens(content)
    : content.reduce(
      (n, part) =>
        n +
        (part.type === "text" ? estimateTokens(part.text) : part.type === "image_url" ? imageTokens : audioTokens(part.input_audio.data)),
      0
    )

/** What a message costs in the context: its content and its tool calls' arguments (a stored row counts the same). */
export const messageTokens = (message: {
  readonly content: ChatMessage["content"]
  readonly tool_calls?: ReadonlyArray<{ readonly function: { readonly arguments: string } }> | null | undefined
}) => {
  // A loop, not a reduce over `tool_calls ?? []`: this runs for every history row several times a turn.
  let tokens = 4 + contentTokens(message.content)
  const calls = message.tool_calls
  if (calls) { for (const call of calls) tokens += estimateTokens(call.function.arguments) + 8 }
  return tokens
}

/** Known context windows; anything else gets the default. */
const contextWindows: ReadonlyArray<readonly [RegExp, number]> = [
  [/gpt-4\.1/, 1_000_000],
  [/gpt-4o|gpt-4-turbo|o1|o3|o4/, 128_000],
  [/gpt-3\.5/, 16_000],
  [/claude/, 200_000],
  [/gemini/, 1_000_000],
  [/llama-?3/, 128_000]
]
export const defaultContextWindow = 128_000

export const contextWindowFor = (model: string) => contextWindows.find(([pattern]) => pattern.test(model))?.[1] ?? defaultContextWindow

export interface ContextInput {
  readonly bot: Bot
  readonly model: string
  readonly history: ReadonlyArray<HistoryRow>
  readonly skills: ReadonlyArray<Skill>
  readonly preamble?: string | undefined
  readonly channel?: { readonly name: string } | undefined
  /** Tokens kept free for the answer. */
  readonly reserve: number
  /** Overrides the model's window (tests, small local models). */
  readonly limit?: number | undefined
  /** A tool result longer than this reaches the model cut, with a note (it is stored whole). */
  readonly toolResultLimit?: number | undefined
}

export const defaultToolResultLimit = 16_000

/** A tool result as the model sees it: whole, or cut at `limit` characters with a note saying so. */
export const forModel = (result: string, limit: number) =>
  result.length <= limit
    ? result
    : `${
      result.slice(0, limit)
    }\n[Tool result cut for the model: ${result.length} characters, the first ${limit} shown. The whole result is stored in the session.]`

export interface AssembledContext {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly used: number
  readonly limit: number
  readonly droppedMessages: number
}

const noAttachments: ReadonlyArray<unknown> = []

/** What the model is given beside a row's text: a user message's attachments (other roles' are not sent). */
const attachmentsOf = (row: HistoryRow): ReadonlyArray<unknown> => (row.role === "user" && row.attachments) || noAttachments

/**
 * A stored message's text, images and (when `hear`) voice as content parts; its text alone when it
 * has neither. Voice is heard once, in its own turn: later turns have its transcript.
 */
const contentOf = (row: HistoryRow, hear: boolean): ChatMessage["content"] => {
  const attachments = attachmentsOf(row)
  // Most rows have none: no arrays made for them.
  if (attachments.length === 0) return row.content
  const images = attachments.map(imageUrlOf).filter((url) => url !== null)
  const voice = hear ? attachments.map(modelAudioOf).filter((audio) => audio !== null) : []
  if (images.length === 0 && voice.length === 0) return row.content
  return [
    ...(row.content ? [{ type: "text" as const, text: row.content }] : []),
    ...images.map((url) => ({ type: "image_url" as const, image_url: { url } })),
    ...voice.map((audio) => ({ type: "input_audio" as const, input_audio: audio }))
  ]
}

const convertRow = (row: HistoryRow, hear: boolean, toolResultLimit: number): ChatMessage => {
  const message: { -readonly [K in keyof ChatMessage]: ChatMessage[K] } = {
    role: row.role,
    content: row.role === "tool" && row.content !== null ? forModel(row.content, toolResultLimit) : contentOf(row, hear)
  }
  if (row.tool_calls && row.tool_calls.length > 0) message.tool_calls = row.tool_calls as ChatMessage["tool_calls"]
  if (row.tool_call_id) message.tool_call_id = row.tool_call_id
  if (row.provider_state) message.providerState = providerStateOf(row.provider_state)
  return message
}

/** The stored state as the provider gave it (jsonb may come back as text). */
const providerStateOf = (stored: unknown): ProviderState | undefined => {
  const value = typeof stored === "string" ? JSON.parse(stored) : stored
  return value && typeof value === "object" && typeof (value as ProviderState).family === "string" ? (value as ProviderState) : undefined
}

/**
 * Stored rows as the model gets them, kept per row: a session's history is held between turns
 * (sessions/History.ts) and every turn sends all of it, so a row is converted once, not on every
 * turn. A row with attachments is converted each time (its voice is heard in its own turn only);
 * a tool result is kept for the limit it was cut at.
 */
const converted = new WeakMap<HistoryRow, { readonly toolResultLimit: number; readonly message: ChatMessage }>()

const toChatMessage = (row: HistoryRow, hear: boolean, toolResultLimit: number): ChatMessage => {
  if (attachmentsOf(row).length > 0) return convertRow(row, hear, toolResultLimit)
  const held = converted.get(row)
  if (held !== undefined && held.toolResultLimit === toolResultLimit) return held.message
  const message = convertRow(row, hear, toolResultLimit)
  converted.set(row, { toolResultLimit, message })
  return message
}

export const systemPrompt = (input: Pick<ContextInput, "bot" | "skills" | "preamble" | "channel">) => {
  const parts: Array<string> = []
  if (input.bot.system_prompt.trim()) parts.push(input.bot.system_prompt.trim())
  if (input.channel) parts.push(`You are talking in the channel "${input.channel.name}".`)
  for (const skill of input.skills) parts.push(`## Skill: ${skill.title} (${skill.id})\n\n${skill.content.trim()}`)
  return parts.join("\n\n")
}

/** What stands in for a tool result that was never stored (the run stopped mid-tool). */
export const missingToolResult = "Error: no result was recorded for this tool call (the run was interrupted)."

/**
 * Puts a stored history into the order providers require: every assistant message with tool calls
 * immediately followed by one result per call. A message stored while a tool ran (a passive or
 * injected one) moves after the block; a call whose result was never stored (cancel, shutdown)
 * gets a stand-in result; a result without its call is dropped.
 */
export const repairToolSequence = (messages: ReadonlyArray<ChatMessage>): Array<ChatMessage> => {
  const out: Array<ChatMessage> = []
  let index = 0
  while (index < messages.length) {
    const message = messages[index]!
    index += 1
    if (message.role === "tool") continue
    out.push(message)
    const calls = message.role === "assistant" ? message.tool_calls : undefined
    if (calls === undefined || calls.length === 0) continue
    const pending = new Map(calls.map((call) => [call.id, call]))
    const results = new Map<string, ChatMessage>()
    const deferred: Array<ChatMessage> = []
    while (index < messages.length && pending.size > results.size) {
      const next = messages[index]!
      if (next.role === "assistant" && (next.tool_calls?.length ?? 0) > 0) break
      index += 1
      if (next.role === "tool") {
        if (next.tool_call_id && pending.has(next.tool_call_id) && !results.has(next.tool_call_id)) results.set(next.tool_call_id, next)
      } else {
        deferred.push(next)
      }
    }
    for (const call of calls) {
      out.push(results.get(call.id) ?? { role: "tool", content: missingToolResult, tool_call_id: call.id })
    }
    out.push(...deferred)
  }
  return out
}

/**
 * The history is trimmed from the oldest end, and only ever to a user message, so a tool result is
 * never separated from the assistant message that asked for it.
 */
export const assemble = (input: ContextInput): AssembledContext => {
  const limit = input.limit ?? contextWindowFor(input.model)
  const head: Array<ChatMessage> = []
  const system = systemPrompt(input)
  if (system) head.push({ role: "system", content: system })
  if (input.preamble?.trim()) head.push({ role: "system", content: input.preamble.trim() })
  // A summarized session: the summary stands in for the messages it covers (they are not loaded).
  const summary = input.history[0]?.summary
  if (summary?.trim()) head.push({ role: "system", content: `Summary of the conversation so far:\n${summary.trim()}` })
  const rows = input.history.filter((row) => !row.cancelled || row.content)
  const newestUser = rows.findLastIndex((row) => row.role === "user")
  const toolResultLimit = input.toolResultLimit ?? defaultToolResultLimit
  const history = repairToolSequence(rows.map((row, index) => toChatMessage(row, index === newestUser, toolResultLimit)))
  const budget = limit - input.reserve - head.reduce((n, m) => n + messageTokens(m), 0)
  let start = 0
  let used = history.reduce((n, m) => n + messageTokens(m), 0)
  while (start < history.length && (used > budget || history[start]!.role !== "user")) {
    used -= messageTokens(history[start]!)
    start += 1
    // Keep the newest message even when alone it overflows: the model must see the question.
    if (start === history.length - 1 && used > budget) break
  }
  const kept = history.slice(start)
  const messages = [...head, ...kept]
  return { messages, used: messages.reduce((n, m) => n + messageTokens(m), 0), limit, droppedMessages: start }
}
