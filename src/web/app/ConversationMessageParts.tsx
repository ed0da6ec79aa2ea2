/** Small pieces of a stored message: its versions switch, its editor, the badge of content from outside. */
import { useEffect, useRef, useState } from "react"
import type { Versions } from "./useChatBranches.ts"

/** `‹ 1/2 ›`: the versions of a message where the conversation branched (edit and resend, regenerate). */
export const VersionSwitch = ({ versions }: { readonly versions: Versions }) => (
  <span className="versions" role="group" aria-label={`Version ${versions.current + 1} of ${versions.total}`}>
    <button
      type="button"
      className="small"
      aria-label="Previous version"
      disabled={versions.current === 0}
      onClick={() => versions.open(versions.current - 1)}
    >
      ‹
    </button>
    <span aria-hidden="true">{versions.current + 1}/{versions.total}</span>
    <button
      type="button"
      className="small"
      aria-label="Next version"
      disabled={versions.current === versions.total - 1}
      onClick={() => versions.open(versions.current + 1)}
    >
      ›
    </button>
  </span>
)

/** A user message being edited: Enter (or Send) sends it on a branch, Escape (or Cancel) leaves it as it was. */
export const MessageEditor = ({ initial, onSend, onCancel }: {
  readonly initial: string
  readonly onSend: (text: string) => void
  readonly onCancel: () => void
}) => {
  const [text, setText] = useState(initial)
  const box = useRef<HTMLTextAreaElement>(null)
  useEffect(() => box.current?.focus(), [])
  const send = () => text.trim() && onSend(text)
  return (
    <form
      className="message-editor"
      onSubmit={(event) => {
        event.preventDefault()
        send()
      }}
    >
      <textarea
        ref={box}
        aria-label="Edit message"
        value={text}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Escape") {
            event.preventDefault()
            event.stopPropagation()
            onCancel()
          } else if (event.key === "Enter" && !event.shiftKey) {
            event.preventDefault()
            send()
          }
        }}
      />
      <div className="message-actions">
        <button type="submit" className="small primary" disabled={!text.trim()}>Send</button>
        <button type="button" className="small" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  )
}

const sources: Record<string, string> = {
  mail: "an email",
  bridge: "a messaging bridge",
  webhook: "a webhook",
  integration: "an integration",
  web: "the web",
  document: "a document",
  mcp: "an MCP server",
  workspace: "the workspace"
}

/** Where content came from, when not from the owner or the user: a small badge, its source in words. */
export const OriginBadge = ({ origin }: {
  readonly origin: { readonly kind?: string; readonly source?: string; readonly detail?: string } | undefined
}) => {
  if (origin?.kind !== "external") return null
  const from = sources[origin.source ?? ""] ?? "outside"
  return (
    <span className="origin-badge" data-testid="origin-badge" title={origin.detail ? `From ${from}: ${origin.detail}` : `From ${from}`}>
      External · from {from}
    </span>
  )
}
