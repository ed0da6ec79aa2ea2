/**
 * Logs: the server's live log (Live mode, LiveTail.tsx); the agent's turns (bot, model, tokens, tools, outcome) and the tool-call audit, newest first;
 * a turn's whole trace by its correlation id; and the server's running log level.
 */
import { useState } from "react"
import type { PageProps } from "../pages.ts"
import { Select, TextField } from "../ui/Field.tsx"
import { JsonView } from "../ui/Json.tsx"
import { Page, Section, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useLoad } from "../ui/useLoad.ts"
import { LiveTail } from "./LiveTail.tsx"
import { LogLevelControl } from "./LogLevel.tsx"
import { TraceView } from "./Trace.tsx"

const outcomes = ["complete", "failed", "cancelled"] as const

const TraceSection = (
  { auth, correlationId, onClose }: Pick<PageProps, "auth"> & { readonly correlationId: string; readonly onClose: () => void }
) => {
  const trace = useLoad(() => auth.call((client) => client.logs.trace({ path: { correlation_id: correlationId } })), [auth, correlationId])
  return (
    <Section title={`Trace ${correlationId}`} actions={<button type="button" className="small" onClick={onClose}>Close trace</button>}>
      {trace.error ? <p role="alert" className="error">{trace.error}</p> : null}
      {trace.data ? <TraceView trace={trace.data} /> : null}
    </Section>
  )
}

const Turns = ({ auth, onTrace }: Pick<PageProps, "auth"> & { readonly onTrace: (id: string) => void }) => {
  const [bot, setBot] = useState("")
  const [outcome, setOutcome] = useState("")
  const botId = bot.trim()
  const turns = useLoad(
    () =>
      auth.call((client) =>
        client.logs.turns({
          urlParams: {
            limit: 100,
            ...(botId ? { bot_id: botId } : {}),
            ...(outcome ? { outcome: outcome as (typeof outcomes)[number] } : {})
          }
        })
      ),
    [auth, botId, outcome]
  )
  return (
    <Section title="Turns" actions={<button type="button" className="small" onClick={() => void turns.reload()}>Refresh</button>}>
      <div className="grid-4">
        <TextField label="Bot" value={bot} onChange={setBot} placeholder="any bot" />
        <Select
          label="Outcome"
          value={outcome}
          onChange={setOutcome}
          options={[{ value: "", label: "Any" }, ...outcomes.map((o) => ({ value: o, label: o }))]}
        />
      </div>
      {turns.error ? <p role="alert" className="error">{turns.error}</p> : null}
      <div {...scrollRegion}>
        <table className="data" aria-label="Turns">
          <thead>
            <tr>
              <th>Started</th>
              <th>Bot</th>
              <th>Model</th>
              <th className="num">Tokens</th>
              <th className="num">LLM calls</th>
              <th>Tools</th>
              <th className="num">Took</th>
              <th>Outcome</th>
              <th>
                <span className="visually-hidden">Trace</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(turns.data?.items ?? []).map((turn) => (
              <tr key={turn.correlation_id}>
                <td>
                  <When at={turn.started_at} />
                </td>
                <td>{turn.bot_id ?? "—"}</td>
                <td>{turn.model ?? "—"}</td>
                <td className="num" title={`${turn.prompt_tokens} in, ${turn.completion_tokens} out`}>{turn.total_tokens}</td>
                <td className="num">{turn.llm_calls}</td>
                <td>
                  <span className="chips">{turn.tools_used.map((tool, i) => <span key={i} className="chip">{tool}</span>)}</span>
                </td>
                <td className="num">{turn.duration_ms} ms</td>
                <td>
                  <StatusBadge
                    state={turn.outcome === "complete" ? "ok" : turn.outcome === "failed" ? "bad" : "off"}
                    label={turn.outcome}
                  />
                  {turn.error ? <div className="error small-text">{turn.error}</div> : null}
                </td>
                <td>
                  <button
                    type="button"
                    className="small"
                    onClick={() => onTrace(turn.correlation_id)}
                    aria-label={`Trace of turn ${turn.correlation_id}`}
                  >
                    Trace
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {turns.data && turns.data.items.length === 0 ? <p className="muted">No turns yet.</p> : null}
      </div>
    </Section>
  )
}

const ToolCalls = ({ auth, onTrace }: Pick<PageProps, "auth"> & { readonly onTrace: (id: string) => void }) => {
  const [tool, setTool] = useState("")
  const [errorsOnly, setErrorsOnly] = useState(false)
  const name = tool.trim()
  const calls = useLoad(
    () =>
      auth.call((client) =>
        client.logs.toolCalls({ urlParams: { limit: 100, ...(name ? { tool: name } : {}), ...(errorsOnly ? { errors: true } : {}) } })
      ),
    [auth, name, errorsOnly]
  )
  return (
    <Section title="Tool calls" actions={<button type="button" className="small" onClick={() => void calls.reload()}>Refresh</button>}>
      <div className="grid-4">
        <TextField label="Tool" value={tool} onChange={setTool} placeholder="any tool" />
        <label className="field checkbox">
          <span className="row">
            <input type="checkbox" checked={errorsOnly} onChange={(event) => setErrorsOnly(event.target.checked)} />
            <span>Failed only</span>
          </span>
        </label>
      </div>
      {calls.error ? <p role="alert" className="error">{calls.error}</p> : null}
      <div {...scrollRegion}>
        <table className="data" aria-label="Tool calls">
          <thead>
            <tr>
              <th>Started</th>
              <th>Tool</th>
              <th>Bot</th>
              <th>Arguments</th>
              <th className="num">Result</th>
              <th className="num">Took</th>
              <th>Error</th>
              <th>
                <span className="visually-hidden">Trace</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(calls.data?.items ?? []).map((call) => (
              <tr key={call.id}>
                <td>
                  <When at={call.started_at} />
                </td>
                <td className="tool-name">{call.tool}</td>
                <td>{call.bot_id ?? "—"}</td>
                <td>
                  <details>
                    <summary>arguments</summary>
                    <JsonView value={call.arguments} label={`Arguments of ${call.tool}`} />
                  </details>
                </td>
                <td className="num">{call.result_chars} chars</td>
                <td className="num">{call.duration_ms} ms</td>
                <td className="error">{call.error ?? ""}</td>
                <td>
                  <button type="button" className="small" onClick={() => onTrace(call.correlation_id)}>Trace</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {calls.data && calls.data.items.length === 0 ? <p className="muted">No tool calls yet.</p> : null}
      </div>
    </Section>
  )
}

export default function LogsPage({ auth }: PageProps) {
  const [traceId, setTraceId] = useState<string | undefined>()
  const [lookup, setLookup] = useState("")
  return (
    <Page title="Logs" actions={<LogLevelControl auth={auth} />}>
      <form
        className="row"
        aria-label="Find a trace"
        onSubmit={(event) => {
          event.preventDefault()
          if (lookup.trim()) setTraceId(lookup.trim())
        }}
      >
        <div className="grow">
          <TextField label="Correlation id" value={lookup} onChange={setLookup} placeholder="a turn's run id" />
        </div>
        <button type="submit" disabled={!lookup.trim()}>Show trace</button>
      </form>
      {traceId ? <TraceSection auth={auth} correlationId={traceId} onClose={() => setTraceId(undefined)} /> : null}
      <LiveTail auth={auth} />
      <Turns auth={auth} onTrace={setTraceId} />
      <ToolCalls auth={auth} onTrace={setTraceId} />
    </Page>
  )
}
