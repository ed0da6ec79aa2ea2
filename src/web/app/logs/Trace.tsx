/** One turn's trace: its spans (turn, LLM calls, tool calls, hooks) nested by parent, each with its timing and attributes. */
import type { Trace, TraceSpan } from "../../../logs/Model.ts"
import { JsonView } from "../ui/Json.tsx"
import { StatusBadge } from "../ui/Page.tsx"

const SpanNode = (
  { span, children }: { readonly span: TraceSpan; readonly children: ReadonlyMap<string | null, ReadonlyArray<TraceSpan>> }
) => (
  <li>
    <details className={`tool${span.status === "error" ? " failed" : ""}`}>
      <summary>
        <span className="chip">{span.kind}</span>
        <span className="tool-name">{span.name}</span>
        <span className="spacer" />
        <span className="mono muted">{span.duration_ms} ms</span>
        <StatusBadge state={span.status === "ok" ? "ok" : span.status === "error" ? "bad" : "off"} label={span.status} />
      </summary>
      <div className="tool-body stack">
        {span.error ? <p className="error">{span.error}</p> : null}
        <JsonView value={span.attributes} label={`Attributes of ${span.name}`} />
      </div>
    </details>
    {(children.get(span.id) ?? []).length > 0 ?
      (
        <ul className="trace">
          {children.get(span.id)!.map((child) => <SpanNode key={child.id} span={child} children={children} />)}
        </ul>
      ) :
      null}
  </li>
)

export const TraceView = ({ trace }: { readonly trace: Trace }) => {
  const ids = new Set(trace.spans.map((span) => span.id))
  const children = new Map<string | null, Array<TraceSpan>>()
  for (const span of trace.spans) {
    // A span whose parent is not in the trace (a turn's outer span) is a root.
    const parent = span.parent_id !== null && ids.has(span.parent_id) ? span.parent_id : null
    children.set(parent, [...(children.get(parent) ?? []), span])
  }
  return (
    <div className="stack" aria-label={`Trace ${trace.correlation_id}`}>
      <p className="muted">
        Bot {trace.bot_id ?? "—"} · session <code>{trace.session_id ?? "—"}</code> · {trace.spans.length} spans
      </p>
      <ul className="trace">
        {(children.get(null) ?? []).map((span) => <SpanNode key={span.id} span={span} children={children} />)}
      </ul>
    </div>
  )
}
