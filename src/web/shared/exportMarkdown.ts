/**
 * A conversation's export (`GET /api/v1/sessions/{id}/export`) as Markdown for people: each message
 * under its role and time, each tool call with its arguments and its result, the settings on top.
 */
interface ExportedMessage {
  readonly role: string
  readonly content: string
  readonly created_at?: Date | undefined
  readonly tool_calls?:
    | ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string; readonly arguments: string } }>
    | null
    | undefined
  readonly tool_call_id?: string | null | undefined
}

export interface ConversationExport {
  readonly session: {
    readonly title: string | null
    readonly model: string | null
    readonly system_prompt: string | null
    readonly temperature: number | null
  }
  readonly messages: ReadonlyArray<ExportedMessage>
}

const fence = (text: string, language = "") => {
  const ticks = "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((match) => match[0].length + 1)))
  return `${ticks}${language}\n${text}\n${ticks}`
}

const pretty = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

const heading = (message: ExportedMessage) => {
  const who = message.role === "user"
    ? "User"
    : message.role === "assistant"
    ? "Assistant"
    : message.role === "tool"
    ? "Tool result"
    : "System"
  return `### ${who}${message.created_at ? ` · ${message.created_at.toISOString()}` : ""}`
}

export const conversationMarkdown = (exported: ConversationExport): string => {
  const { session, messages } = exported
  const names = new Map(messages.flatMap((message) => (message.tool_calls ?? []).map((call) => [call.id, call.function.name] as const)))
  const lines: Array<string> = [`# ${session.title ?? "Conversation"}`, ""]
  if (session.model) lines.push(`- Model: ${session.model}`)
  if (session.temperature !== null) lines.push(`- Temperature: ${session.temperature}`)
  if (session.system_prompt) lines.push(`- Instructions: ${session.system_prompt.replace(/\s+/g, " ")}`)
  for (const message of messages) {
    lines.push("", heading(message), "")
    if (message.role === "tool") {
      lines.push(
        `Result of \`${names.get(message.tool_call_id ?? "") ?? message.tool_call_id ?? "a tool"}\`:`,
        "",
        fence(pretty(message.content))
      )
      continue
    }
    if (message.content) lines.push(message.content)
    for (const call of message.tool_calls ?? []) {
      lines.push("", `Calls \`${call.function.name}\`:`, "", fence(pretty(call.function.arguments), "json"))
    }
  }
  return `${lines.join("\n").trim()}\n`
}

/** Saves `text` as a file the browser downloads. */
export const download = (name: string, type: string, text: string) => {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const link = document.createElement("a")
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** A file name from a conversation's title. */
export const fileNameOf = (title: string | null, extension: string) =>
  `${(title ?? "conversation").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "").slice(0, 60) || "conversation"}.${extension}`
