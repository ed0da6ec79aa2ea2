/**
 * Stored messages as the conversation shows them: the user's text, the assistant's answers as
 * markdown with their folded reasoning, and each tool call as a card with its stored result. Under
 * each message: when it was written (the full date on hover), the model that wrote an answer, and Copy.
 */
import { memo, useState } from "react"
import { copyText, Markdown } from "../shared/Markdown.tsx"
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
  readonly created_at: Date
}

const meta = (message: StoredMessage) =>
  (message.metadata ?? {}) as { reasoning?: string; cancelled?: boolean; passive?: boolean; model?: string }

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" })
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" })

/** A message's footer: its time, the model of an answer, and a button copying its text. */
export const MessageActions = ({ text, at, model }: { readonly text: string; readonly at?: Date; readonly model?: string | undefined }) => {
  const [copied, setCopied] = useState(false)
  const copy = () =>
    void copyText(text).then(() => {
      setCopied(true)
      setTimeout(() => setCopied(false), 2_000)
    })
  return (
    <div className="message-actions">
      {at ? <time dateTime={at.toISOString()} title={dateFormat.format(at)}>{timeFormat.format(at)}</time> : null}
      {model ? <span title="Model">{model}</span> : null}
      {text ?
        (
          <button type="button" className="small" aria-label={copied ? "Copied" : "Copy message"} onClick={copy}>
            {copied ? "Copied" : "Copy"}
          </button>
        ) :
        null}
    </div>
  )
}

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
              <MessageActions text={message.content} at={message.created_at} />
            </div>
          )
        }
        if (message.role !== "assistant") return null
        const { reasoning, cancelled, model } = meta(message)
        const final = !(message.tool_calls && message.tool_calls.length > 0)
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
            {final ? <MessageActions text={message.content} at={message.created_at} model={model} /> : null}
          </div>
        )
      })}
    </>
  )
})
