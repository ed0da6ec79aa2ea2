/**
 * The events a run emits, exactly as they travel on the SSE stream (`data: <json>`): each has a
 * `type`, and the fields the spec lists for it. Companion clients also get `tool` beside `name`
 * and `approval_id` beside `request_id`.
 */

export type AgentEvent =
  | { readonly type: "assistant_text"; readonly text: string; readonly delta: string }
  | { readonly type: "thinking_content"; readonly text: string; readonly delta: string }
  | { readonly type: "tool_start"; readonly tool: string; readonly name: string; readonly args: unknown; readonly tool_call_id: string }
  | {
      readonly type: "tool_result"
      readonly tool: string
      readonly name: string
      readonly result: string
      readonly duration_ms: number
      readonly tool_call_id: string
      readonly is_error: boolean
    }
  | { readonly type: "tool_request"; readonly request_id: string; readonly tool: string; readonly name: string; readonly arguments: unknown }
  | {
      readonly type: "approval_request"
      readonly request_id: string
      readonly approval_id: string
      readonly tool_name: string
      readonly tool: string
      readonly arguments: unknown
    }
  | { readonly type: "approval_resolved"; readonly request_id: string; readonly approval_id: string; readonly approved: boolean }
  | { readonly type: "delegation_post"; readonly target_bot: string }
  | { readonly type: "secret_warning"; readonly patterns: ReadonlyArray<string> }
  | { readonly type: "rate_limit_wait"; readonly wait_seconds: number }
  | { readonly type: "fallback"; readonly original_model: string; readonly fallback_model: string }
  | { readonly type: "context_budget"; readonly used: number; readonly limit: number }
  | { readonly type: "transcript"; readonly text: string }
  | { readonly type: "error"; readonly message: string }
  | { readonly type: "cancelled" }
  | { readonly type: "queued"; readonly session_id: string; readonly task_id: string; readonly reason: string }
  | { readonly type: "passive_stored"; readonly session_id: string }
  | {
      readonly type: "response"
      readonly text: string
      readonly tools_used: ReadonlyArray<string>
      readonly client_actions: ReadonlyArray<unknown>
      readonly session_id: string
    }

export type AgentEventType = AgentEvent["type"]

/** A run's event with its place in the run: the SSE `id`. */
export interface SequencedEvent {
  readonly seq: number
  readonly event: AgentEvent
}

/** Events after which a run's stream ends. */
export const isTerminal = (event: AgentEvent) => event.type === "response" || event.type === "cancelled"

/**
 * Streamed text events carry the full text so far; only the delta is stored, and replay rebuilds
 * the full text, so storage stays linear in the answer's length.
 */
export const toStored = (event: AgentEvent): unknown =>
  event.type === "assistant_text" || event.type === "thinking_content" ? { type: event.type, delta: event.delta } : event

export const fromStored = (stored: ReadonlyArray<{ seq: number; event: any }>): Array<SequencedEvent> => {
  const running: Record<string, string> = { assistant_text: "", thinking_content: "" }
  return stored.map(({ seq, event }) => {
    if (event.type === "assistant_text" || event.type === "thinking_content") {
      running[event.type] += event.delta
      return { seq, event: { type: event.type, text: running[event.type]!, delta: event.delta } }
    }
    // A new LLM iteration starts a new assistant text (the loop resets it on tool calls).
    if (event.type === "tool_start" || event.type === "fallback") running.assistant_text = ""
    return { seq, event: event as AgentEvent }
  })
}
