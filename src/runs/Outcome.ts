/**
 * How a run ends, as its callers learn it (a blocking turn, a task, the OpenAI surface), and what a
 * failed run says to its client: kept apart from the engine so a reader of the outcome needs none of it.
 */
import { Cause } from "effect"
import type { TurnResult } from "../agent/Turn.ts"

export type RunOutcome =
  | { readonly _tag: "complete"; readonly result: TurnResult }
  /** `budget`: a spend cap refused a model call of the run, and when its period ends (a blocking call answers 429). */
  | { readonly _tag: "failed"; readonly message: string; readonly budget?: { readonly retryAfterSeconds: number } }
  | { readonly _tag: "cancelled"; readonly partial: string }
  /** Stopped by the server (shutdown, lost lock), not by the run or the user: a task is retried. */
  | { readonly _tag: "interrupted"; readonly message: string }

/**
 * What a run's failure says to its client: a model's failure with its detail, a declared error's
 * own words; a defect (a bug, a database error) only that the server failed, since its text is
 * internal (the log has it whole).
 */
export const runFailureMessage = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "None") return "The run failed on an internal error; the server log has the details"
  const error = failure.value
  if (error && typeof error === "object") {
    const tagged = error as { _tag?: string; detail?: unknown; message?: unknown }
    if (tagged._tag === "LlmError" && typeof tagged.detail === "string") return `The model call failed: ${tagged.detail}`
    if (typeof tagged.detail === "string" && tagged.detail) return tagged.detail
    if (typeof tagged.message === "string" && tagged.message) return tagged.message
  }
  return "The run failed"
}

/** The budget's refusal a run failed on, with when to retry (the period's end); undefined for any other failure. */
export const budgetRefusal = (cause: Cause.Cause<unknown>): { readonly retryAfterSeconds: number } | undefined => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "None") return undefined
  const error = failure.value as { _tag?: string; kind?: string; retryAfterSeconds?: number } | null
  return error && typeof error === "object" && error._tag === "LlmError" && error.kind === "budget_exceeded"
    ? { retryAfterSeconds: Math.max(1, Math.ceil(error.retryAfterSeconds ?? 1)) }
    : undefined
}

/** The `error` event's code for a failure a client may act on: a model call a budget refused. */
export const runFailureCode = (cause: Cause.Cause<unknown>): { readonly code?: string } =>
  budgetRefusal(cause) ? { code: "budget_exceeded" } : {}
