/**
 * One answer as its events build it: text, folded thinking and tool calls in the order they came,
 * approvals inline on their tool card, and the quiet notices (`queued`, `fallback`,
 * `rate_limit_wait`, `secret_warning`, `context_budget`, `transcript`). A pure reducer, so a replay
 * of the same events gives the same answer.
 */
import type { AgentEvent } from "../../agent/Events.ts"

export interface ToolPart {
  readonly kind: "tool"
  readonly id: string
  readonly name: string
  readonly args: unknown
  readonly result?: unknown
  readonly durationMs?: number
  readonly error?: string
  readonly approval?: { readonly id: string; readonly state: "pending" | "approved" | "denied" }
}
export type Part = { readonly kind: "text"; readonly text: string } | { readonly kind: "thinking"; readonly text: string } | ToolPart

export interface Turn {
  readonly parts: ReadonlyArray<Part>
  readonly notices: ReadonlyArray<string>
  readonly status: "running" | "done" | "cancelled" | "failed"
  readonly error?: string
}

export const emptyTurn: Turn = { parts: [], notices: [], status: "running" }

const appendText = (parts: ReadonlyArray<Part>, kind: "text" | "thinking", delta: string): ReadonlyArray<Part> => {
  const last = parts.at(-1)
  if (last?.kind === kind) return [...parts.slice(0, -1), { kind, text: last.text + delta }]
  return [...parts, { kind, text: delta }]
}

const updateTool = (parts: ReadonlyArray<Part>, match: (tool: ToolPart) => boolean, change: (tool: ToolPart) => ToolPart) => {
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!
    if (part.kind === "tool" && match(part)) return [...parts.slice(0, i), change(part), ...parts.slice(i + 1)]
  }
  return parts
}

export const noticeOf = (event: AgentEvent): string | undefined => {
  switch (event.type) {
    case "queued":
      return event.reason === "system_paused" ? "Queued: the system is paused" : "Queued: waiting for the previous answer"
    case "fallback":
      return `Fell back from ${event.original_model} to ${event.fallback_model}`
    case "rate_limit_wait":
      return `Waiting ${Math.ceil(event.wait_seconds)} s for the model's rate limit`
    case "secret_warning":
      return `Your message looks like it contains a secret (${event.patterns.map((p) => p.type).join(", ")})`
    case "context_budget":
      return `Context: ${event.used.toLocaleString()} of ${event.limit.toLocaleString()} tokens`
    case "transcript":
      return `Heard: “${event.text}”`
    default:
      return undefined
  }
}

export const applyEvent = (turn: Turn, event: AgentEvent): Turn => {
  switch (event.type) {
    case "assistant_text":
      return { ...turn, parts: appendText(turn.parts, "text", event.delta) }
    case "thinking_content":
      return { ...turn, parts: appendText(turn.parts, "thinking", event.delta) }
    case "tool_start": {
      // A decided call's card came with its approval request; the call itself joins it.
      const decided = turn.parts.at(-1)
      if (
        decided?.kind === "tool" && decided.approval && decided.approval.state !== "pending" && decided.name === event.name &&
        decided.result === undefined
      ) {
        return { ...turn, parts: [...turn.parts.slice(0, -1), { ...decided, id: event.tool_call_id, args: event.args }] }
      }
      return { ...turn, parts: [...turn.parts, { kind: "tool", id: event.tool_call_id, name: event.name, args: event.args }] }
    }
    case "tool_result":
      return {
        ...turn,
        parts: updateTool(
          turn.parts,
          (tool) => tool.id === event.tool_call_id,
          (tool) => ({
            ...tool,
            result: event.result,
            durationMs: event.duration_ms,
            ...(event.error ? { error: event.error } : event.is_error ? { error: "failed" } : {})
          })
        )
      }
    case "approval_request": {
      // The call's `tool_start` comes first: its card takes Approve and Deny, so it shows once.
      const waiting = turn.parts.findLastIndex((part) =>
        part.kind === "tool" && part.name === event.tool_name && part.approval === undefined && part.result === undefined
      )
      if (waiting >= 0) {
        return {
          ...turn,
          parts: turn.parts.map((part, index) =>
            index === waiting && part.kind === "tool" ? { ...part, approval: { id: event.approval_id, state: "pending" } } : part
          )
        }
      }
      // A replay that starts at the request: the card starts here.
      return {
        ...turn,
        parts: [
          ...turn.parts,
          {
            kind: "tool",
            id: `approval:${event.approval_id}`,
            name: event.tool_name,
            args: event.arguments,
            approval: { id: event.approval_id, state: "pending" }
          }
        ]
      }
    }
    case "approval_resolved":
      return {
        ...turn,
        parts: updateTool(
          turn.parts,
          (tool) => tool.approval?.id === event.approval_id,
          (tool) => ({ ...tool, approval: { id: event.approval_id, state: event.approved ? "approved" : "denied" } })
        )
      }
    case "error":
      return { ...turn, status: "failed", error: event.message }
    case "cancelled":
      return { ...turn, status: "cancelled" }
    case "response":
      return { ...turn, status: turn.status === "failed" ? "failed" : "done" }
    default: {
      const notice = noticeOf(event)
      return notice === undefined
        ? turn
        : { ...turn, notices: [...turn.notices.filter((n) => n !== notice || event.type !== "context_budget"), notice] }
    }
  }
}
