/**
 * What can go wrong between Cairn and a provider, described but not yet judged (`Upstream.ts`
 * decides what it means: a retry, a 429, a 502), and the provider's own words from an error body.
 */
import { Data } from "effect"

/** A provider call that did not give a usable answer, described but not yet judged. */
export class WireError extends Data.TaggedError("WireError")<{
  readonly reason: "status" | "unreachable" | "timeout" | "malformed" | "stream_error"
  /** The HTTP status (for `status`). */
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** The provider's words (status, stream_error) or what went wrong (unreachable, malformed). */
  readonly message: string
}> {}

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The provider's own message from an error body: OpenAI's `{"error": {"message"}}`, a bare
 * `{"error": "..."}` or `{"message": "..."}`, else the text itself.
 */
export const providerMessage = (status: number | undefined, text: string): string => {
  const parsed = parseJson(text) as { error?: unknown; message?: unknown } | undefined
  const error = parsed && typeof parsed === "object" ? parsed.error : undefined
  if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") {
    const message = (error as { message: string }).message
    if (message.length > 0) return message
  }
  if (typeof error === "string" && error.length > 0) return error
  if (parsed && typeof parsed === "object" && typeof parsed.message === "string" && parsed.message.length > 0) return parsed.message
  if (error !== undefined && error !== null) return JSON.stringify(error)
  const trimmed = text.trim()
  if (trimmed.length > 0) return trimmed.length > 1000 ? `${trimmed.slice(0, 1000)}…` : trimmed
  return status === undefined ? "The provider sent an error without a message" : `${status} status code (no body)`
}

