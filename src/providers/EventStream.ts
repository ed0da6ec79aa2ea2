/**
 * The `data` payloads of a provider's server-sent event stream, in order, until `[DONE]` or the end
 * of the body. Lines may end in CRLF, LF or CR. An `event: error` frame, or a payload carrying an
 * `error` object (OpenAI's way of failing mid-stream), fails with `stream_error`; a connection lost
 * mid-stream with `unreachable` (worth a retry while nothing has been passed on). A last event
 * without its closing blank line is still delivered: some servers end that way.
 */
import type * as http from "node:http"
import { parseJson, providerMessage, WireError } from "./Wire.ts"

/** How long the rest of a finished stream's body may take to drain before its socket is dropped. */
const drainGraceMs = 1_000

export class EventStream {
  private readonly decoder = new TextDecoder()
  private buffer = ""
  private data: Array<string> = []
  private event = ""
  private readonly ready: Array<{ readonly event: string; readonly data: string }> = []
  private readonly chunks: AsyncIterator<Buffer>
  private bodyEnded = false
  /** `[DONE]` or the end of the body was reached: a normal finish. */
  private finished = false

  constructor(readonly response: http.IncomingMessage) {
    this.chunks = response[Symbol.asyncIterator]()
  }

  /** Ends the stream at once, and the request with it; a pending `next` fails. */
  close() {
    this.response.destroy()
  }

  /**
   * After a normal finish the rest of the body (the chunked terminator) is read, so the socket
   * goes back to the keep-alive pool; a stream left early (cancel, timeout, failure) is cut.
   */
  release() {
    const response = this.response
    if (response.complete || response.destroyed) return
    if (!this.finished) return response.destroy()
    const timer = setTimeout(() => response.destroy(), drainGraceMs)
    timer.unref()
    void (async () => {
      try {
        while (!(await this.chunks.next()).done) {
          // discarded: everything after [DONE] is ignored
        }
      } catch {
        // a broken connection after the end changes nothing
      } finally {
        clearTimeout(timer)
      }
    })()
  }

  /** The next payload parsed as JSON, or undefined at the end. */
  async next(): Promise<unknown> {
    for (;;) {
      const frame = this.ready.shift()
      if (frame !== undefined) {
        if (frame.data === "[DONE]") {
          this.finished = true
          return undefined
        }
        const parsed = parseJson(frame.data)
        if (frame.event === "error" || (parsed && typeof parsed === "object" && "error" in parsed && (parsed as { error: unknown }).error)) {
          throw new WireError({ reason: "stream_error", message: providerMessage(undefined, frame.data) })
        }
        if (parsed === undefined) throw new WireError({ reason: "malformed", message: `an event is not JSON: ${frame.data.slice(0, 200)}` })
        return parsed
      }
      if (this.bodyEnded) {
        this.finished = true
        return undefined
      }
      let chunk: IteratorResult<Buffer>
      try {
        chunk = await this.chunks.next()
      } catch (error) {
        throw new WireError({
          reason: "unreachable",
          message: `the connection broke mid-stream: ${error instanceof Error ? error.message : String(error)}`
        })
      }
      if (chunk.done) {
        this.bodyEnded = true
        this.feed(this.decoder.decode(), true)
      } else this.feed(this.decoder.decode(chunk.value, { stream: true }), false)
    }
  }

  private feed(text: string, final: boolean) {
    this.buffer += text
    for (;;) {
      const lf = this.buffer.indexOf("\n")
      const cr = this.buffer.indexOf("\r")
      let end: number
      let rest: number
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        // A CR at the end of what has come so far may be the first half of a CRLF.
        if (cr === this.buffer.length - 1 && !final) break
        end = cr
        rest = this.buffer[cr + 1] === "\n" ? cr + 2 : cr + 1
      } else if (lf >= 0) {
        end = lf
        rest = lf + 1
      } else break
      const line = this.buffer.slice(0, end)
      this.buffer = this.buffer.slice(rest)
      this.line(line)
    }
    if (final) {
      if (this.buffer.length > 0) this.line(this.buffer)
      this.buffer = ""
      this.line("")
    }
  }

  private line(line: string) {
    if (line.length === 0) {
      if (this.data.length > 0) this.ready.push({ event: this.event, data: this.data.join("\n") })
      this.data = []
      this.event = ""
      return
    }
    if (line.startsWith(":")) return
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "data") this.data.push(value)
    else if (field === "event") this.event = value
  }
}
