/**
 * The wire to an OpenAI-compatible provider: JSON over node:http(s) with keep-alive agents,
 * server-sent events for streams, multipart for audio. It replaces the `openai` SDK, whose request
 * building, hooks and fetch web streams cost several times the rest of a proxied call
 * (bench/llmProxy.ts); the protocol itself is small. What a failure means (retry, 429, 502) is
 * decided in `Upstream.ts`; here it is only described.
 */
import { Effect, type Scope } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"
import { readText } from "../http/ReadText.ts"
import { EventStream } from "./EventStream.ts"
import { parseJson, providerMessage, WireError } from "./Wire.ts"

export { EventStream } from "./EventStream.ts"
export { providerMessage, WireError } from "./Wire.ts"

export interface Connection {
  /** The API root, e.g. `https://api.openai.com/v1`; paths are appended to it. */
  readonly baseUrl: string
  readonly apiKey: string | undefined
  /** Sent with every request; they may replace `authorization` (Azure's `api-key`, say). */
  readonly headers: Readonly<Record<string, string>>
  /** A blocking call must be answered whole within this; a stream must start within it. */
  readonly timeoutMs: number
}

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 256 })
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
   * other status is read whole and failed as `status`. The timer runs until `onResponse` calls
   * `finish`, or for streams until the headers arrive. A keep-alive socket the provider closed
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
        // Set once any answer arrived: from then on a reset is a broken answer, never a reason to
        // send the request again (the provider has it, and may bill it).
        let answered = false
        const current = this.transport.request(
          { hostname: this.hostname, port: this.port, path: this.basePath + exchange.path + this.query, method: exchange.method, headers, agent: this.agent },
          (response) => {
            answered = true
            const status = response.statusCode ?? 0
            if (status >= 200 && status < 300) {
              if (streaming) clearTimeout(timer)
              response.on("error", broken)
              response.on("close", () => {
                if (!response.complete) broken(undefined)
              })
              return onResponse(response, finish)
            }
            readText(response, (text) =>
              finish(Effect.fail(new WireError({ reason: "status", status, headers: response.headers, message: providerMessage(status, text) })))
            , broken)
          }
        )
        request = current
        current.on("error", (error: NodeJS.ErrnoException) => {
          if (!retried && !answered && !timedOut && !settled && current.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE")) {
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
        readText(
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
        `--${boundary}\r\ncontent-disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.name)}"\r\ncontent-type: ${file.type.replace(/[\r\n]/g, "")}\r\n\r\n`
      ),
      Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength),
      Buffer.from(`\r\n--${boundary}--\r\n`)
    )
    return this.json({ method: "POST", path, body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` })
  }

  /**
   * Opens a server-sent event stream: succeeds once a 2xx event-stream answer's headers are in,
   * with the data payloads to iterate. A 2xx that is not an event stream (a provider that ignored
   * `stream: true`) fails: with its error message if it carries one, else as malformed. Closing the
   * scope ends the request unless the stream finished (then its socket is kept for reuse).
   */
  events(path: string, payload: unknown): Effect.Effect<EventStream, WireError, Scope.Scope> {
    const open = this.send<http.IncomingMessage>(
      { method: "POST", path, body: Buffer.from(JSON.stringify(payload)), accept: "text/event-stream" },
      (response, finish) => finish(Effect.succeed(response)),
      true
    )
    const checked = Effect.flatMap(open, (response) => {
      const type = response.headers["content-type"] ?? ""
      if (type.toLowerCase().includes("text/event-stream")) return Effect.succeed(new EventStream(response))
      return Effect.async<never, WireError>((resume) =>
        readText(
          response,
          (text) => {
            const parsed = parseJson(text) as { error?: unknown } | undefined
            resume(
              Effect.fail(
                parsed && typeof parsed === "object" && parsed.error
                  ? new WireError({ reason: "stream_error", message: providerMessage(undefined, text) })
                  : new WireError({ reason: "malformed", message: `expected an event stream, got ${type || "no content type"}` })
              )
            )
          },
          (error) => resume(Effect.fail(new WireError({ reason: "unreachable", message: error.message })))
        )
      )
    })
    return Effect.acquireRelease(Effect.interruptible(checked), (events) => Effect.sync(() => events.release()))
  }
}
