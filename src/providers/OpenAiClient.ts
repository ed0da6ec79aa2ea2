/**
 * The wire to an OpenAI-compatible provider: JSON over node:http(s) with keep-alive agents,
 * server-sent events for streams, multipart for audio. It replaces the `openai` SDK, whose request
 * building, hooks and fetch web streams cost several times the rest of a proxied call
 * (bench/llmProxy.ts); the protocol itself is small. What a failure means (retry, 429, 502) is
 * decided in `Upstream.ts`; here it is only described.
 */
import { Data, Effect, type Scope } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"

export interface Connection {
  /** The API root, e.g. `https://api.openai.com/v1`; paths are appended to it. */
  readonly baseUrl: string
  readonly apiKey: string | undefined
  /** Sent with every request; they may replace `authorization` (Azure's `api-key`, say). */
  readonly headers: Readonly<Record<string, string>>
  /** A blocking call must be answered whole within this; a stream must start within it. */
  readonly timeoutMs: number
}

/** A provider call that did not give a usable answer, described but not yet judged. */
export class WireError extends Data.TaggedError("WireError")<{
  readonly reason: "status" | "unreachable" | "timeout" | "malformed" | "stream_error"
  /** The HTTP status (for `status`). */
  readonly status?: number
  readonly headers?: http.IncomingHttpHeaders
  /** The provider's words (status, stream_error) or what went wrong (unreachable, malformed). */
  readonly message: string
}> {}

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 256 })
}

const parseJson = (text: string): unknown => {
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

interface Exchange {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body?: Buffer
  readonly contentType?: string
  readonly timeoutMs?: number
  readonly accept?: string
}

/** One client per provider connection; safe to share between concurrent calls. */
export class OpenAiClient {
  private readonly transport: typeof http | typeof https
  private readonly agent: http.Agent
  private readonly hostname: string
  private readonly port: string
  private readonly basePath: string
  /** A query the base URL carries (Azure's `?api-version=...`), kept on every request. */
  private readonly query: string
  private readonly baseHeaders: Record<string, string>

  constructor(readonly connection: Connection) {
    const url = new URL(connection.baseUrl)
    const secure = url.protocol === "https:"
    this.transport = secure ? https : http
    this.agent = agents[secure ? "https:" : "http:"]
    this.hostname = url.hostname.replace(/^\[|\]$/g, "")
    this.port = url.port
    this.basePath = url.pathname.replace(/\/+$/, "")
    this.query = url.search
    const headers: Record<string, string> = { "user-agent": "cairn" }
    if (url.username || url.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
    }
    if (connection.apiKey !== undefined && connection.apiKey.length > 0) headers.authorization = `Bearer ${connection.apiKey}`
    for (const [name, value] of Object.entries(connection.headers)) headers[name.toLowerCase()] = value
    this.baseHeaders = headers
  }

  /**
   * Sends one request and calls `onResponse` with a 2xx response once its headers are in; any
   * other status is read whole and failed as `status`. The timer runs until `onResponse` returns
   * true ("done"), or for streams until the headers arrive. A keep-alive socket the provider closed
   * while idle fails at once on reuse: that request never arrived, so it is sent once more.
   */
  private send<A>(
    exchange: Exchange,
    onResponse: (response: http.IncomingMessage, finish: (result: Effect.Effect<A, WireError>) => void) => void,
    streaming: boolean
  ): Effect.Effect<A, WireError, never> {
    return Effect.async<A, WireError>((resume) => {
      let settled = false
      let timedOut = false
      let request: http.ClientRequest | undefined
      const timer = setTimeout(() => {
        timedOut = true
        request?.destroy()
      }, exchange.timeoutMs ?? this.connection.timeoutMs)
      const finish = (result: Effect.Effect<A, WireError>) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(result)
      }
      const broken = (error: Error | undefined) =>
        finish(
          Effect.fail(
            timedOut
              ? new WireError({ reason: "timeout", message: "The provider did not answer in time" })
              : new WireError({ reason: "unreachable", message: error?.message ?? "The connection closed early" })
          )
        )
      const headers: Record<string, string> = { ...this.baseHeaders, accept: exchange.accept ?? "application/json" }
      if (exchange.body !== undefined) {
        headers["content-type"] = exchange.contentType ?? "application/json"
        headers["content-length"] = String(exchange.body.length)
      }
      const attempt = (retried: boolean) => {
        const current = this.transport.request(
          { hostname: this.hostname, port: this.port, path: this.basePath + exchange.path + this.query, method: exchange.method, headers, agent: this.agent },
          (response) => {
            const status = response.statusCode ?? 0
            if (status >= 200 && status < 300) {
              if (streaming) clearTimeout(timer)
              response.on("error", broken)
              response.on("close", () => {
                if (!response.complete) broken(undefined)
              })
              return onResponse(response, finish)
            }
            readAll(response, (text) =>
              finish(Effect.fail(new WireError({ reason: "status", status, headers: response.headers, message: providerMessage(status, text) })))
            , broken)
          }
        )
        request = current
        current.on("error", (error: NodeJS.ErrnoException) => {
          if (!retried && !timedOut && !settled && current.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE")) {
            return attempt(true)
          }
          broken(error)
        })
        current.end(exchange.body)
      }
      attempt(false)
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
        request?.destroy()
      })
    })
  }

  /** A JSON request answered with JSON. */
  json(exchange: Exchange): Effect.Effect<unknown, WireError> {
    return this.send<unknown>(
      exchange,
      (response, finish) =>
        readAll(
          response,
          (text) => {
            const parsed = parseJson(text)
            finish(
              parsed === undefined
                ? Effect.fail(new WireError({ reason: "malformed", message: `the body is not JSON: ${text.slice(0, 200)}` }))
                : Effect.succeed(parsed)
            )
          },
          () => undefined // `send` reports a broken body
        ),
      false
    )
  }

  postJson(path: string, payload: unknown): Effect.Effect<unknown, WireError> {
    return this.json({ method: "POST", path, body: Buffer.from(JSON.stringify(payload)) })
  }

  getJson(path: string, timeoutMs?: number): Effect.Effect<unknown, WireError> {
    return this.json({ method: "GET", path, ...(timeoutMs !== undefined ? { timeoutMs } : {}) })
  }

  /** A multipart/form-data request (audio uploads): text fields and one file. */
  postMultipart(
    path: string,
    fields: Readonly<Record<string, string>>,
    file: { readonly field: string; readonly name: string; readonly type: string; readonly data: Uint8Array }
  ): Effect.Effect<unknown, WireError> {
    const boundary = `cairn-${crypto.randomUUID()}`
    const quote = (value: string) => value.replace(/["\r\n]/g, (c) => encodeURIComponent(c))
    const parts: Array<Buffer> = []
    for (const [name, value] of Object.entries(fields)) {
      parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`))
    }
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.name)}"\r\ncontent-type: ${file.type}\r\n\r\n`
      ),
      Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength),
      Buffer.from(`\r\n--${boundary}--\r\n`)
    )
    return this.json({ method: "POST", path, body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` })
  }

  /**
   * Opens a server-sent event stream: succeeds once a 2xx answer's headers are in, with the data
   * payloads to iterate. Closing the scope ends the request (a cancel, an idle timeout).
   */
  events(path: string, payload: unknown): Effect.Effect<EventStream, WireError, Scope.Scope> {
    let response: http.IncomingMessage | undefined
    const open = this.send<http.IncomingMessage>(
      { method: "POST", path, body: Buffer.from(JSON.stringify(payload)), accept: "text/event-stream" },
      (r, finish) => finish(Effect.succeed(r)),
      true
    )
    return Effect.acquireRelease(
      Effect.map(Effect.interruptible(open), (r) => {
        response = r
        return new EventStream(r)
      }),
      () => Effect.sync(() => response?.destroy())
    )
  }
}

/** Reads a whole body as UTF-8 text. */
const readAll = (response: http.IncomingMessage, done: (text: string) => void, broken: (error: Error) => void) => {
  const chunks: Array<Buffer> = []
  response.on("data", (chunk: Buffer) => chunks.push(chunk))
  response.on("end", () => done(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")))
  response.on("error", broken)
}

/**
 * The `data` payloads of a server-sent event stream, in order, until `[DONE]` or the end. An
 * `event: error` frame, or a payload carrying an `error` object (OpenAI's way of failing mid-stream),
 * fails with `stream_error`.
 */
export class EventStream {
  private readonly decoder = new TextDecoder()
  private buffer = ""
  private data: Array<string> = []
  private event = ""
  private readonly ready: Array<{ readonly event: string; readonly data: string }> = []
  private readonly chunks: AsyncIterator<Buffer>
  private finished = false

  constructor(readonly response: http.IncomingMessage) {
    this.chunks = response[Symbol.asyncIterator]()
  }

  /** Ends the stream (the request with it); a pending `next` fails. */
  close() {
    this.response.destroy()
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
      if (this.finished) return undefined
      const chunk = await this.chunks.next()
      if (chunk.done) {
        this.feed(this.decoder.decode() + "\n\n")
        this.finished = true
        continue
      }
      this.feed(this.decoder.decode(chunk.value, { stream: true }))
    }
  }

  private feed(text: string) {
    this.buffer += text
    let newline: number
    while ((newline = this.buffer.indexOf("\n")) >= 0) {
      let line = this.buffer.slice(0, newline)
      this.buffer = this.buffer.slice(newline + 1)
      if (line.endsWith("\r")) line = line.slice(0, -1)
      if (line.length === 0) {
        if (this.data.length > 0) this.ready.push({ event: this.event, data: this.data.join("\n") })
        this.data = []
        this.event = ""
        continue
      }
      if (line.startsWith(":")) continue
      const colon = line.indexOf(":")
      const field = colon < 0 ? line : line.slice(0, colon)
      let value = colon < 0 ? "" : line.slice(colon + 1)
      if (value.startsWith(" ")) value = value.slice(1)
      if (field === "data") this.data.push(value)
      else if (field === "event") this.event = value
    }
  }
}
