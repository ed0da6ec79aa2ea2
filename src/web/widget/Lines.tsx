/** The conversation's lines: the greeting first (the host's, never sent), then the visitor's and the bot's. */
import { useEffect, useRef } from "react"
import { Markdown } from "../shared/Markdown.tsx"
import type { Line } from "./useConversation.ts"

export const Lines = ({ lines, greeting }: { readonly lines: ReadonlyArray<Line>; readonly greeting: string | null }) => {
  const list = useRef<HTMLOListElement>(null)
  useEffect(() => {
    list.current?.lastElementChild?.scrollIntoView({ block: "end" })
  }, [lines])
  return (
    // Focusable: the keyboard can scroll a long conversation.
    <ol className="cairn-widget__lines" ref={list} aria-live="polite" aria-label="Conversation" tabIndex={0}>
      {greeting && (
        <li className="cairn-widget__line cairn-widget__line--assistant" data-role="greeting">
          <p className="cairn-widget__text">{greeting}</p>
        </li>
      )}
      {lines.map((line) => (
        <li key={line.key} className={`cairn-widget__line cairn-widget__line--${line.role}`} data-role={line.role} data-state={line.state}>
          {line.text &&
            (line.role === "assistant" ?
              (
                <div className="cairn-widget__text">
                  <Markdown text={line.text} />
                </div>
              ) :
              <p className="cairn-widget__text">{line.text}</p>)}
          {line.images > 0 && <p className="cairn-widget__meta">{line.images === 1 ? "1 image" : `${line.images} images`}</p>}
          {line.state === "streaming" && !line.text && !line.note && <p className="cairn-widget__meta">…</p>}
          {line.note && (
            <p className="cairn-widget__note" role={line.state === "failed" ? "alert" : undefined}>
              {line.note}
            </p>
          )}
        </li>
      ))}
    </ol>
  )
}
