/**
 * A provider's server-sent events, decoded as text arrives (the WHATWG event-stream format: lines
 * end in LF, CRLF or a bare CR; `data:` lines join with LF; a blank line dispatches; `:` starts a
 * comment; one space after the colon is dropped), and read as OpenAI's chat stream reads them:
 * `[DONE]` ends it, each other payload is JSON, an `error` payload or event ends it with the
 * provider's words. Pure: the socket is `OpenAiClient`'s.
 */

export interface ServerSentEvent {
  readonly event: string | null
  readonly data: string
}

export class EventStreamDecoder {
  /** The start of a line whose end has not arrived. */
  private partial = ""
  /** The last text ended in CR: an LF first in the next is that line's end, not a blank line. */
  private afterCarriageReturn = false
  private event: string | null = null
  private data: Array<string> = []

  /** The events completed by `text`, appended to `out`. */
  push(text: string, out: Array<ServerSentEvent>): void {
    let start = 0
    if (this.afterCarriageReturn && text.charCodeAt(0) === 10) start = 1
    this.afterCarriageReturn = false
    for (let i = start; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code !== 10 && code !== 13) continue
      const line = this.partial.length > 0 ? this.partial + text.slice(start, i) : text.slice(start, i)
      this.partial = ""
      this.line(line, out)
      if (code === 13) {
        if (i + 1 === text.length) this.afterCarriageReturn = true
        else if (text.charCodeAt(i + 1) === 10) i++
      }
      start = i + 1
    }
    if (start < text.length) this.partial += text.slice(start)
  }

  /**
   * The end of the body: a last line and event the provider left unterminated are delivered, not
   * dropped (a lenient reading, as the `openai` SDK's own).
   */
  end(out: Array<ServerSentEvent>): void {
    if (this.partial.length > 0) this.line(this.partial, out)
    this.partial = ""
    this.line("", out)
  }

  private line(line: string, out: Array<ServerSentEvent>): void {
    if (line.length === 0) {
      if (this.event === null && this.data.length === 0) return
      out.push({ event: this.event, data: this.data.join("\n") })
      this.event = null
      this.data = []
      return
    }
    if (line.charCodeAt(0) === 58) return // ":" a comment
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? "" : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    if (field === "data") this.data.push(value)
    else if (field === "event") this.event = value
  }
}

/** What a chat stream's event means: a payload, the end (`[DONE]`), or the provider's failure. */
export type ChatStreamItem =
  | { readonly _tag: "Payload"; readonly value: unknown }
  | { readonly _tag: "Done" }
  | { readonly _tag: "Failed"; readonly reason: "stream_error" | "malformed"; readonly message: string }

const wordsOf = (value: unknown): string | undefined => {
  if (value === null || typeof value !== "object") return undefined
  const message = (value as { message?: unknown }).message
  return typeof message === "string" ? message : undefined
}

export const readChatEvent = (sse: ServerSentEvent): ChatStreamItem => {
  if (sse.data.startsWith("[DONE]")) return { _tag: "Done" }
  let value: unknown
  try {
    value = JSON.parse(sse.data)
  } catch (error) {
    return { _tag: "Failed", reason: "malformed", message: error instanceof Error ? error.message : String(error) }
  }
  const error = value !== null && typeof value === "object" ? (value as { error?: unknown }).error : undefined
  if (error) {
    return {
      _tag: "Failed",
      reason: "stream_error",
      message: typeof error === "string" ? error : (wordsOf(error) ?? JSON.stringify(error))
    }
  }
  if (sse.event === "error") return { _tag: "Failed", reason: "stream_error", message: wordsOf(value) ?? JSON.stringify(value) }
  return { _tag: "Payload", value }
}
