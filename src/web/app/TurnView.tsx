/** An answer's parts: text as markdown, thinking folded, each tool call as a collapsible card. */
import { Markdown } from "../shared/Markdown.tsx"
import type { ToolPart, Turn } from "../shared/turn.ts"
import { OriginBadge } from "./ConversationMessageParts.tsx"

const pretty = (value: unknown): string => {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2)
    } catch {
      return value
    }
  }
  return JSON.stringify(value, null, 2) ?? ""
}

export const Thinking = ({ text }: { readonly text: string }) => (
  <details className="thinking">
    <summary>Thinking</summary>
    <p className="plain">{text}</p>
  </details>
)

export const ToolCard = (
  { tool, canDecide, onDecide, origin }: {
    readonly tool: ToolPart
    readonly canDecide?: boolean
    readonly onDecide?: (id: string, approved: boolean) => void
    /** Where the stored result came from (its message's `metadata.origin`). */
    readonly origin?: Parameters<typeof OriginBadge>[0]["origin"]
  }
) => {
  const state = tool.error
    ? "failed"
    : tool.approval?.state === "denied"
    ? "denied"
    : tool.result !== undefined
    ? "done"
    : tool.approval?.state === "pending"
    ? "waiting"
    : "running"
  return (
    <details className={`tool ${state}`} data-testid="tool-card" open={tool.approval?.state === "pending"}>
      <summary>
        <span className="tool-name">{tool.name}</span>
        <OriginBadge origin={origin} />
        <span className="muted">
          {state === "done" && tool.durationMs !== undefined ? `${tool.durationMs} ms` : state}
        </span>
      </summary>
      <div className="tool-body">
        <h4>Arguments</h4>
        <pre>{pretty(tool.args)}</pre>
        {tool.result !== undefined ?
          (
            <>
              <h4>Result</h4>
              <pre>{pretty(tool.result)}</pre>
            </>
          ) :
          null}
        {tool.error ? <p className="error">Error: {tool.error}</p> : null}
        {tool.approval?.state === "pending" && canDecide && onDecide ?
          (
            <div className="approval" role="group" aria-label={`Approve ${tool.name}?`}>
              <span>Run this tool?</span>
              <button type="button" className="primary" onClick={() => onDecide(tool.approval!.id, true)}>Approve</button>
              <button type="button" onClick={() => onDecide(tool.approval!.id, false)}>Deny</button>
            </div>
          ) :
          null}
        {tool.approval && tool.approval.state !== "pending"
          ? <p className="muted">{tool.approval.state === "approved" ? "Approved" : "Denied"}</p>
          : null}
      </div>
    </details>
  )
}

export const TurnView = (
  { turn, canDecide, onDecide, onRetry }: {
    readonly turn: Turn
    readonly canDecide: boolean
    readonly onDecide: (id: string, approved: boolean) => void
    /** Given when the failed answer's message can be sent again. */
    readonly onRetry?: (() => void) | undefined
  }
) => (
  <div className={`message assistant ${turn.status}`} data-testid="live-answer" aria-busy={turn.status === "running"}>
    {turn.notices.map((notice) => <p key={notice} className="notice">{notice}</p>)}
    {turn.parts.map((part, index) =>
      part.kind === "text" ?
        <Markdown key={index} text={part.text} settled={turn.status !== "running"} /> :
        part.kind === "thinking" ?
        <Thinking key={index} text={part.text} /> :
        <ToolCard key={part.id} tool={part} canDecide={canDecide} onDecide={onDecide} />
    )}
    {turn.status === "running" && turn.parts.length === 0 ? <p className="muted typing">…</p> : null}
    {turn.status === "cancelled" ? <p className="notice">Stopped</p> : null}
    {turn.error ? <p className="error" role="alert">{turn.error}</p> : null}
    {turn.status === "failed" && onRetry ?
      (
        <div className="message-actions">
          <button type="button" className="small" onClick={onRetry}>Retry</button>
        </div>
      ) :
      null}
  </div>
)
