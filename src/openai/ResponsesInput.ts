/**
 * A Responses API request read as Chat Completions messages, so one reading of a conversation
 * (Conversation.ts) serves both endpoints; and the ids of stored responses, which name the session
 * and the run they came from. Pure.
 */
import { randomBytes } from "node:crypto"
import type { CompletionMessage } from "./Model.ts"
import type { CallerTool } from "./Model.ts"
import type { InputItem, ResponseRequest, ResponseTool } from "./ResponsesModel.ts"

type ContentPart = Extract<InputItem, { type?: "message" }>["content"]

const hex = (uuid: string) => uuid.replaceAll("-", "")
const uuidOf = (hex32: string) =>
  `${hex32.slice(0, 8)}-${hex32.slice(8, 12)}-${hex32.slice(12, 16)}-${hex32.slice(16, 20)}-${hex32.slice(20)}`

/** The id of a response, or of one of its items: a stored one names its session and run; a stateless one is random. */
export const responseIds = (stored: { readonly sessionId: string; readonly runId: string } | null) => {
  const key = stored ? `${hex(stored.sessionId)}${hex(stored.runId)}` : randomBytes(24).toString("hex")
  return {
    response: `resp_${key}`,
    message: `msg_${key}`,
    call: (index: number) => `fc_${key}_${index}`
  }
}

const storedId = /^(?:resp|msg|fc)_([0-9a-f]{32})([0-9a-f]{32})(?:_\d+)?$/

/** The session and run a stored response's id (or its item's) names; null for any other string. */
export const storedIdOf = (id: string): { readonly sessionId: string; readonly runId: string } | null => {
  const match = storedId.exec(id)
  return match ? { sessionId: uuidOf(match[1]!), runId: uuidOf(match[2]!) } : null
}

const textOfParts = (content: ContentPart): string =>
  typeof content === "string"
    ? content
    : content.flatMap((part) => (part.type === "input_image" ? [] : [part.text])).join("\n\n")

type UserContent = Extract<CompletionMessage, { role: "user" }>["content"]

const userContent = (content: ContentPart): UserContent =>
  typeof content === "string"
    ? content
    : content.map((part) =>
      part.type === "input_image"
        ? { type: "image_url" as const, image_url: { url: part.image_url ?? "" } }
        : { type: "text" as const, text: part.text }
    )

export interface ReadInput {
  /** The request as chat messages: the instructions first (as a system message), then the items. */
  readonly messages: ReadonlyArray<CompletionMessage>
  /** For each message, the `input` index it came from (null: the instructions, or a call made up for an output). */
  readonly origins: ReadonlyArray<number | null>
  /** The ids of items of earlier responses (`item_reference` items, or an echoed item's `id`), in order. */
  readonly references: ReadonlyArray<string>
  /** The `input` indexes of outputs that answer no call of the input: only a stored response's calls can they answer. */
  readonly answeringPrevious: ReadonlyArray<number>
}

/**
 * The input as chat messages. Function calls join the assistant message before them (or make one);
 * outputs become tool messages. Outputs that answer no call of the input answer the calls of the
 * previous response: an assistant message naming their call ids stands for it (the bound session
 * checks them against the calls it waits on).
 */
export const readInput = (request: Pick<ResponseRequest, "input" | "instructions">): ReadInput => {
  const messages: Array<CompletionMessage> = []
  const origins: Array<number | null> = []
  const references: Array<string> = []
  const answeringPrevious: Array<number> = []
  const push = (message: CompletionMessage, origin: number | null) => {
    messages.push(message)
    origins.push(origin)
  }
  if (request.instructions?.trim()) push({ role: "system", content: request.instructions }, null)
  const items: ReadonlyArray<InputItem> = typeof request.input === "string"
    ? [{ role: "user", content: request.input }]
    : request.input
  items.forEach((item, index) => {
    if (item.type === "item_reference") {
      references.push(item.id)
      return
    }
    if (item.type !== "function_call_output" && item.id) references.push(item.id)
    if (item.type === "function_call") {
      const call = { id: item.call_id, type: "function" as const, function: { name: item.name, arguments: item.arguments } }
      const last = messages.at(-1)
      if (last?.role === "assistant") {
        messages[messages.length - 1] = { ...last, tool_calls: [...(last.tool_calls ?? []), call] }
      } else push({ role: "assistant", content: null, tool_calls: [call] }, index)
      return
    }
    if (item.type === "function_call_output") {
      const asked = messages.findLast((message) => message.role === "assistant")
      const known = asked?.tool_calls?.some((call) => call.id === item.call_id) ?? false
      if (!known && messages.at(-1)?.role !== "tool") {
        push({ role: "assistant", content: null, tool_calls: [] }, null)
      }
      if (!known) {
        answeringPrevious.push(index)
        const previous = messages.findLastIndex((message) => message.role === "assistant")
        const assistant = messages[previous] as Extract<CompletionMessage, { role: "assistant" }>
        const call = { id: item.call_id, type: "function" as const, function: { name: "", arguments: "" } }
        messages[previous] = { ...assistant, tool_calls: [...(assistant.tool_calls ?? []), call] }
      }
      push({ role: "tool", tool_call_id: item.call_id, content: textOfParts(item.output) }, index)
      return
    }
    if (item.role === "user") push({ role: "user", content: userContent(item.content) }, index)
    else if (item.role === "assistant") push({ role: "assistant", content: textOfParts(item.content) }, index)
    else push({ role: item.role, content: textOfParts(item.content) }, index)
  })
  return { messages, origins, references, answeringPrevious }
}

/** The Responses API's flat function tools in Chat Completions' shape. */
export const callerToolsOf = (tools: ReadonlyArray<ResponseTool>): ReadonlyArray<CallerTool> =>
  tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      ...(tool.parameters ? { parameters: tool.parameters } : {})
    }
  }))

/** A location in the chat messages made of the input, as the location in the input it came from. */
export const inputLocation = (loc: ReadonlyArray<string | number>, origins: ReadonlyArray<number | null>) => {
  if (loc[0] !== "body" || loc[1] !== "messages" || typeof loc[2] !== "number") return loc
  const origin = origins[loc[2]]
  if (origin === undefined || origin === null) return ["body", "input"]
  return ["body", "input", origin]
}
