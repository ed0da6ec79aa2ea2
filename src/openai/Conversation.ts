/**
 * An OpenAI request's messages read as a Cairn turn: what is new (the newest user message, or the
 * caller's tool results after the last assistant message) and, for a stateless call, the history
 * before it. Pure: the handlers decide what to run with it.
 */
import { Either, Schema } from "effect"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { ImageAttachment } from "../sessions/Attachments.ts"
import type { HistoryRow } from "../sessions/Repo.ts"
import type { CallerTool, CompletionMessage } from "./Model.ts"

export interface CallerToolResult {
  readonly tool_call_id: string
  readonly content: string
}

/** What the request adds to the conversation: a user message, or tool results (then `text` is empty). */
export interface NewInput {
  readonly text: string
  readonly images: ReadonlyArray<ImageAttachment>
  readonly toolResults: ReadonlyArray<CallerToolResult>
}

export interface ReadConversation {
  /** Everything before the new input but the system messages, in Cairn's history rows (used by stateless calls only). */
  readonly history: ReadonlyArray<HistoryRow>
  /**
   * The caller's system (and developer) messages, joined: the turn's one-shot preamble after the
   * bot's own prompt. Not history: a bound session would store them again with every request.
   */
  readonly preamble: string
  readonly input: NewInput
}

type Content = CompletionMessage["content"]
type ToolResultMessage = Extract<CompletionMessage, { role: "tool" }>

/** A message's text: the string, or its text parts joined by blank lines. */
export const textOf = (content: Content): string => {
  if (content === undefined || content === null) return ""
  if (typeof content === "string") return content
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n\n")
}

const decodeImage = Schema.decodeUnknownEither(ImageAttachment)
const dataUrl = /^data:([^;,]+);base64,(.*)$/s

/** A user message's images as Cairn attachments (a `data:` URL whole, an http(s) URL by reference). */
const imagesOf = (content: Content, messageIndex: number): Either.Either<Array<ImageAttachment>, ReadonlyArray<ValidationIssue>> => {
  if (typeof content === "string" || !content) return Either.right([])
  const images: Array<ImageAttachment> = []
  const issues: Array<ValidationIssue> = []
  content.forEach((part, partIndex) => {
    if (part.type !== "image_url") return
    const url = part.image_url.url
    const inline = dataUrl.exec(url)
    const name = `image-${messageIndex + 1}-${partIndex + 1}`
    const decoded = decodeImage(
      inline ? { type: "image", mime_type: inline[1], name, data: inline[2] } : { type: "image", mime_type: "image/png", name, url }
    )
    if (Either.isRight(decoded)) images.push(decoded.right)
    else {
      issues.push(
        new ValidationIssue({
          loc: ["body", "messages", messageIndex, "content", partIndex, "image_url", "url"],
          msg: "Expected a data: URL (base64) of a PNG, JPEG, GIF or WebP image, or an http(s) URL",
          type: "invalid_image"
        })
      )
    }
  })
  return issues.length > 0 ? Either.left(issues) : Either.right(images)
}

const toRow = (message: CompletionMessage, index: number): Either.Either<HistoryRow, ReadonlyArray<ValidationIssue>> => {
  const base = { tool_calls: null, tool_call_id: null, cancelled: false } as const
  switch (message.role) {
    case "system":
    case "developer":
      return Either.right({ ...base, role: "system", content: textOf(message.content) })
    case "user":
      return Either.map(imagesOf(message.content, index), (images) => ({
        ...base,
        role: "user" as const,
        content: textOf(message.content),
        attachments: images.length > 0 ? images : null
      }))
    case "assistant":
      return Either.right({
        ...base,
        role: "assistant",
        content: textOf(message.content) || null,
        tool_calls: message.tool_calls && message.tool_calls.length > 0 ? message.tool_calls : null
      })
    case "tool":
      return Either.right({ ...base, role: "tool", content: textOf(message.content), tool_call_id: message.tool_call_id })
  }
}

const lastIssue = (index: number, msg: string) => ValidationError.single(["body", "messages", index, "role"], msg, "invalid_conversation")

/**
 * The request read as a turn. The last message must be the user's, or the caller's tool results
 * (every message after the last assistant one must then be a tool result).
 */
export const readConversation = (messages: ReadonlyArray<CompletionMessage>): Either.Either<ReadConversation, ValidationError> => {
  const lastIndex = messages.length - 1
  const last = messages[lastIndex]!
  let newFrom: number
  if (last.role === "user") newFrom = lastIndex
  else if (last.role === "tool") {
    newFrom = lastIndex
    while (newFrom > 0 && messages[newFrom - 1]!.role === "tool") newFrom -= 1
    const asked = messages[newFrom - 1]
    if (newFrom === 0 || asked?.role !== "assistant") {
      return Either.left(lastIssue(newFrom, "Tool results must follow the assistant message whose tool calls they answer"))
    }
    const calls = new Set((asked.tool_calls ?? []).map((call) => call.id))
    for (let index = newFrom; index <= lastIndex; index++) {
      const result = messages[index] as ToolResultMessage
      if (!calls.has(result.tool_call_id)) {
        return Either.left(
          ValidationError.single(
            ["body", "messages", index, "tool_call_id"],
            "Answers no tool call of the assistant message before it",
            "unknown_tool_call"
          )
        )
      }
    }
  } else return Either.left(lastIssue(lastIndex, "The last message must be the user's, or tool results"))

  const rows: Array<HistoryRow> = []
  const issues: Array<ValidationIssue> = []
  messages.forEach((message, index) => {
    const row = toRow(message, index)
    if (Either.isLeft(row)) issues.push(...row.left)
    else rows.push(row.right)
  })
  if (issues.length > 0) return Either.left(new ValidationError({ detail: issues }))
  const added = messages.slice(newFrom)
  const input: NewInput = last.role === "user"
    ? { text: rows[lastIndex]!.content ?? "", images: (rows[lastIndex]!.attachments ?? []) as Array<ImageAttachment>, toolResults: [] }
    : {
      text: "",
      images: [],
      toolResults: (added as ReadonlyArray<ToolResultMessage>).map((message) => ({
        tool_call_id: message.tool_call_id,
        content: textOf(message.content)
      }))
    }
  // A user message is stored by the turn itself; tool results are history the turn reads.
  const before = last.role === "user" ? rows.slice(0, lastIndex) : rows
  return Either.right({
    history: before.filter((row) => row.role !== "system"),
    preamble: before.flatMap((row) => (row.role === "system" && row.content?.trim() ? [row.content.trim()] : [])).join("\n\n"),
    input
  })
}

/**
 * The caller's tools, checked as a provider would check them (a provider's refusal would come back
 * as a failed turn): each name once, its parameters a JSON Schema object.
 */
export const checkCallerTools = (tools: ReadonlyArray<CallerTool>): Either.Either<void, ValidationError> => {
  const seen = new Set<string>()
  const issues: Array<ValidationIssue> = []
  tools.forEach((tool, index) => {
    const { name, parameters } = tool.function
    if (seen.has(name)) {
      issues.push(
        new ValidationIssue({
          loc: ["body", "tools", index, "function", "name"],
          msg: `Another tool is named ${name}`,
          type: "duplicate_tool"
        })
      )
    }
    seen.add(name)
    if (parameters !== undefined && parameters.type !== "object") {
      issues.push(
        new ValidationIssue({
          loc: ["body", "tools", index, "function", "parameters"],
          msg: "Expected a JSON Schema with \"type\": \"object\"",
          type: "invalid_parameters"
        })
      )
    }
  })
  return issues.length > 0 ? Either.left(new ValidationError({ detail: issues })) : Either.void
}
