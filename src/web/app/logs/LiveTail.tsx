/**
 * The Logs page's Live mode: the server's log lines as they are written, filtered by level and
 * text, coloured by level (and named, so colour is never the only sign). The view follows new
 * lines unless the reader scrolled up; Pause holds new lines until Resume.
 */
import { useEffect, useRef, useState } from "react"
import type { PageProps } from "../pages.ts"
import { Select, TextField } from "../ui/Field.tsx"
import { Section } from "../ui/Page.tsx"
import { useFollowScroll } from "../useFollowScroll.ts"
import "./logs.css"
import { type TailFilters, type TailItem, useLogTail } from "./useLogTail.ts"

const levels: ReadonlyArray<{ readonly value: TailFilters["level"]; readonly label: string }> = [
  { value: "", label: "Every line" },
  { value: "debug", label: "Debug and up" },
  { value: "info", label: "Info and up" },
  { value: "warning", label: "Warnings and errors" },
  { value: "error", label: "Errors only" }
]

const statusText = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", stopped: "Stopped" } as const

const time = (timestamp: string) => timestamp.slice(11, 23)

const Line = ({ item }: { readonly item: TailItem }) => {
  if (item.type === "skipped") {
    return (
      <div className="tail-skipped">
        {item.count} {item.count === 1 ? "line" : "lines"} skipped{" "}
        {item.reason === "slow_reader" ? "(the view fell behind)" : "(no longer kept)"}
      </div>
    )
  }
  const annotations = Object.entries(item.annotations)
  return (
    <div className={`tail-line level-${item.level}`}>
      <time dateTime={item.timestamp}>{time(item.timestamp)}</time> <span className="tail-level">{item.level.toUpperCase()}</span>{" "}
      <span className="tail-message">{item.message}</span>
      {annotations.length > 0 ?
        (
          <span className="tail-annotations">
            {annotations.map(([key, value]) => ` ${key}=${typeof value === "string" ? value : JSON.stringify(value)}`).join("")}
          </span>
        ) :
        null}
      {item.cause ?
        (
          <details>
            <summary>cause</summary>
            <pre>{item.cause}</pre>
          </details>
        ) :
        null}
    </div>
  )
}

export const LiveTail = ({ auth }: Pick<PageProps, "auth">) => {
  const [on, setOn] = useState(false)
  const [level, setLevel] = useState<TailFilters["level"]>("")
  const [text, setText] = useState("")
  const [q, setQ] = useState("")
  const [paused, setPaused] = useState(false)
  // The text filter restarts the stream: once typing stops, not at each key.
  useEffect(() => {
    const timer = setTimeout(() => setQ(text.trim()), 300)
    return () => clearTimeout(timer)
  }, [text])
  const tail = useLogTail(auth, on, { level, q }, paused)
  const bar = useRef<HTMLDivElement>(null)
  const { scroller, content, away, onScroll, leaveBottom, jumpToLatest } = useFollowScroll(tail.items, undefined, bar)
  const toggle = (
    <button type="button" className="small" aria-pressed={on} onClick={() => setOn(!on)}>
      {on ? "Stop live" : "Live"}
    </button>
  )
  return (
    <Section title="Live log" actions={toggle}>
      {!on ? <p className="muted">Follow this server's log lines as they are written, filtered by level and text.</p> : (
        <>
          <div className="grid-4" ref={bar}>
            <Select label="Level" value={level} onChange={(value) => setLevel(value as TailFilters["level"])} options={levels} />
            <TextField label="Contains" value={text} onChange={setText} placeholder="any text" />
            <div className="row">
              <button type="button" onClick={() => setPaused(!paused)}>
                {paused ? `Resume${tail.held > 0 ? ` (${tail.held} new)` : ""}` : "Pause"}
              </button>
              <button type="button" onClick={tail.clear}>Clear</button>
              <span role="status" className="muted">{paused ? "Paused" : statusText[tail.status]}</span>
            </div>
          </div>
          {tail.error ? <p role="alert" className="error">{tail.error}</p> : null}
          <div
            className="log-tail"
            ref={scroller}
            role="log"
            aria-label="Live log lines"
            tabIndex={0}
            onScroll={onScroll}
            onWheel={(event) => event.deltaY < 0 && leaveBottom()}
            onKeyDown={(event) => ["ArrowUp", "PageUp", "Home"].includes(event.key) && leaveBottom()}
          >
            <div ref={content}>
              {tail.items.map((item) => <Line key={item.key} item={item} />)}
              {tail.items.length === 0 ? <p className="muted">No lines yet.</p> : null}
            </div>
          </div>
          {away ? <button type="button" className="small" onClick={jumpToLatest}>Jump to latest ↓</button> : null}
        </>
      )}
    </Section>
  )
}
