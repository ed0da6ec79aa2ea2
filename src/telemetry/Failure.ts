/**
 * What went wrong, in a line, from an Effect's cause: the error's message, else its `detail` (a
 * tagged error of the API), else its tag; with the underlying error's own words after it when it
 * wraps one (a SqlError and the database's message).
 */
import { Cause } from "effect"

export const failureText = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause) as { message?: unknown; detail?: unknown; _tag?: unknown; cause?: { message?: unknown } } | null
  if (!error || typeof error !== "object") return String(error)
  const text = typeof error.message === "string" && error.message.length > 0
    ? error.message
    : typeof error.detail === "string" && error.detail.length > 0
    ? error.detail
    : typeof error._tag === "string"
    ? error._tag
    : String(error)
  const inner = error.cause && typeof error.cause === "object" && typeof error.cause.message === "string" && error.cause.message !== text
    ? `: ${error.cause.message}`
    : ""
  return text + inner
}
