/**
 * Stored messages as the conversation shows them: the user's text, the assistant's answers as
 * markdown with their folded reasoning, and each tool call as a card with its stored result.
 */
import { memo } from "react"
import { Markdown } from "../shared/Markdown.tsx"
import { Thinking, ToolCard } from "./TurnView.tsx"

export interface StoredMessage {
  readonly id: string
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content: string
  readonly metadata: unknown
  readonly tool_calls:
    | ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string; readonly arguments: string } }>
    | null
  readonly tool_call_id: string | null
  readonly attachments: ReadonlyArray<unknown>
}

const meta = (message: StoredMessage) => (message.metadata ?? {}) as { reasoning?: string; cancelled?: boolean; passive?: boolean }

export const MessageList = memo(({ messages }: { readonly messages: ReadonlyArray<StoredMessage> }) => {
  const results = new Map(messages.filter((m) => m.role === "tool" && m.tool_call_id).map((m) => [m.tool_call_id!, m.content]))
  return (
    <>
      {messages.map((message) => {
        if (message.role === "user") {
          return (
            <div key={message.id} className="message user">
              <p className="plain">{message.content}</p>
              {message.attachments.length > 0 ? <p className="muted">{message.attachments.length} attachment(s)</p> : null}
            </div>
          )
        }
        if (message.role !== "assistant") return null
        const { reasoning, cancelled } = meta(message)
        return (
          <div key={message.id} className="message assistant" data-testid="stored-answer">
            {reasoning ? <Thinking text={reasoning} /> : null}
            {message.content ? <Markdown text={message.content} /> : null}
            {(message.tool_calls ?? []).map((call) => (
              <ToolCard
                key={call.id}
                tool={{
                  kind: "tool",
                  id: call.id,
                  name: call.function.name,
                  args: call.function.arguments,
                  ...(results.has(call.id) ? { result: results.get(call.id) } : {})
                }}
              />
            ))}
            {cancelled ? <p className="notice">Stopped</p> : null}
          </div>
        )
      })}
    </>
  )
})
