/**
 * Stored messages as the conversation shows them: the user's text, the assistant's answers as
 * markdown with their folded reasoning, and each tool call as a card with its stored result. Under
 * each message: when it was written (the full date on hover), the model that wrote an answer and
 * its tokens (on hover), Copy; Edit on the user's messages and Regenerate on the last answer (both
 * branch the conversation, `useChatBranches.ts`), and `‹ 1/2 ›` where it branched. Content that came
 * from outside (a mail, a web page, a webhook) carries a badge saying so.
 */
import { memo, type ReactNode, useState } from "react"
import { copyText, Markdown } from "../shared/Markdown.tsx"
import { MessageEditor, OriginBadge, VersionSwitch } from "./ConversationMessageParts.tsx"
import { Thinking, ToolCard } from "./TurnView.tsx"
import type { Versions } from "./useChatBranches.ts"

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

interface Meta {
  readonly reasoning?: string
  readonly cancelled?: boolean
  readonly passive?: boolean
  readonly model?: string
  readonly usage?: { readonly prompt_tokens?: number; readonly completion_tokens?: number }
  readonly origin?: { readonly kind?: string; readonly source?: string; readonly detail?: string }
}
export const meta = (message: StoredMessage) => (message.metadata ?? {}) as Meta

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" })
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" })

/** What the actions of a message can do; absent, the action is not offered. */
export interface MessageHandlers {
  /** Sends the user message again, edited, on a branch of the conversation. */
  readonly onEdit?: ((message: StoredMessage, text: string) => void) | undefined
  /** A new answer to the user message `message` answered, on a branch. */
  readonly onRegenerate?: ((message: StoredMessage) => void) | undefined
  readonly versionsOf?: ((message: StoredMessage) => Versions | undefined) | undefined
}

/** A message's footer: its time, the model of an answer and its tokens on hover, and a button copying its text. */
export const MessageActions = ({ text, at, model, tokens, children }: {
  readonly text: string
  readonly at?: Date
  readonly model?: string | undefined
  readonly tokens?: Meta["usage"] | undefined
  readonly children?: ReactNode
}) => {
  const [copied, setCopied] = useState(false)
  const copy = () =>
    void copyText(text).then(() => {
      setCopied(true)
      setTimeout(() => setCopied(false), 2_000)
    })
  const counted = tokens && (tokens.prompt_tokens !== undefined || tokens.completion_tokens !== undefined)
    ? `${tokens.prompt_tokens ?? 0} tokens in, ${tokens.completion_tokens ?? 0} out`
    : undefined
  return (
    <div className="message-actions">
      {at ? <time dateTime={at.toISOString()} title={dateFormat.format(at)}>{timeFormat.format(at)}</time> : null}
      {model ? <span title={counted ? `${model}: ${counted}` : "Model"} data-testid="message-model">{model}</span> : null}
      {counted ? <span className="visually-hidden" data-testid="message-tokens">{counted}</span> : null}
      {children}
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

const UserMessage = ({ message, handlers }: { readonly message: StoredMessage; readonly handlers: MessageHandlers }) => {
  const [editing, setEditing] = useState(false)
  const versions = handlers.versionsOf?.(message)
  const { onEdit } = handlers
  if (editing && onEdit) {
    return (
      <div className="message user editing">
        <MessageEditor
          initial={message.content}
          onCancel={() => setEditing(false)}
          onSend={(text) => {
            setEditing(false)
            onEdit(message, text)
          }}
        />
      </div>
    )
  }
  return (
    <div className="message user" data-testid="stored-question">
      <OriginBadge origin={meta(message).origin} />
      <p className="plain">{message.content}</p>
      {message.attachments.length > 0 ? <p className="muted">{message.attachments.length} attachment(s)</p> : null}
      <MessageActions text={message.content} at={message.created_at}>
        {versions ? <VersionSwitch versions={versions} /> : null}
        {onEdit ? <button type="button" className="small" aria-label="Edit message" onClick={() => setEditing(true)}>Edit</button> : null}
      </MessageActions>
    </div>
  )
}

/** The user message a final answer at `index` answers: the last before it. */
const questionOf = (messages: ReadonlyArray<StoredMessage>, index: number) => messages.slice(0, index).findLast((m) => m.role === "user")

export const MessageList = memo(({ messages, handlers = {} }: {
  readonly messages: ReadonlyArray<StoredMessage>
  readonly handlers?: MessageHandlers
}) => {
  const results = new Map(messages.filter((m) => m.role === "tool" && m.tool_call_id).map((m) => [m.tool_call_id!, m]))
  const lastAnswer = messages.findLastIndex((m) => m.role === "assistant")
  return (
    <>
      {messages.map((message, index) => {
        if (message.role === "user") return <UserMessage key={message.id} message={message} handlers={handlers} />
        if (message.role !== "assistant") return null
        const { reasoning, cancelled, model, usage } = meta(message)
        const final = !(message.tool_calls && message.tool_calls.length > 0)
        const question = final && index === lastAnswer && handlers.onRegenerate ? questionOf(messages, index) : undefined
        return (
          <div key={message.id} className="message assistant" data-testid="stored-answer">
            {reasoning ? <Thinking text={reasoning} /> : null}
            {message.content ? <Markdown text={message.content} /> : null}
            {(message.tool_calls ?? []).map((call) => {
              const result = results.get(call.id)
              return (
                <ToolCard
                  key={call.id}
                  tool={{
                    kind: "tool",
                    id: call.id,
                    name: call.function.name,
                    args: call.function.arguments,
                    ...(result ? { result: result.content } : {})
                  }}
                  origin={result ? meta(result).origin : undefined}
                />
              )
            })}
            {cancelled ? <p className="notice">Stopped</p> : null}
            {final ?
              (
                <MessageActions text={message.content} at={message.created_at} model={model} tokens={usage}>
                  {question ?
                    (
                      <button
                        type="button"
                        className="small"
                        aria-label="Regenerate answer"
                        onClick={() => handlers.onRegenerate!(question)}
                      >
                        Regenerate
                      </button>
                    ) :
                    null}
                </MessageActions>
              ) :
              null}
          </div>
        )
      })}
    </>
  )
})
