/**
 * One provider connection: blocking chat, embeddings, audio transcription and the model list
 * through the `openai` SDK, and the streamed chat (every turn's call) directly over node:http. The
 * SDK does the wire of the former (requests, headers, multipart); this file configures it for an
 * OpenAI-compatible server that may not be OpenAI, and describes every failure as a `WireError`
 * (what it means, a retry, a 429 or a 502, is decided in `Upstream.ts`), with the provider's own
 * words from an error body.
 *
 * Why the streamed chat is not the SDK's: it is the one call on every turn's path, and the SDK
 * reads an event stream through a web stream, an async generator per layer and a promise per
 * event (bench/README.md "The streamed call without the SDK": a quarter less CPU a call read from
 * the socket's own events, a tenth less per turn). The direct call sends what the SDK sends (the
 * same URL, query, headers and body) and reads the stream by the same rules (`EventStream.ts`).
 *
 * What the SDK is told, and why:
 * - `maxRetries: 0`: retries, Retry-After and fallbacks are `Llm`'s, across providers.
 * - a `fetch` over node:http keep-alive sockets (`NodeFetch.ts`: Node's built-in fetch costs
 *   ~450 µs of CPU a call more), which sends a request once more when it met a kept-alive
 *   connection the provider had closed, and rewrites a provider's error body into OpenAI's shape,
 *   so the SDK's error carries the provider's own words whatever shape they came in.
 * - the base URL's query (Azure's `api-version`) as the default query, and its credentials (if
 *   any) as a Basic authorization, since fetch refuses a URL that carries them.
 * - no `Authorization` when the connection has no key; a provider's own headers may replace it.
 * - the blocking timeout covers the whole answer (the SDK's own stops at the headers), and a
 *   stream's only its opening; the caller keeps an idle timer on the stream itself.
 */
import { Data, Effect, type Scope } from "effect"
import type * as http from "node:http"
import OpenAI, { toFile } from "openai"
import { cairnVersion } from "../contract/Version.ts"
import { EventStreamDecoder, readChatEvent, type ServerSentEvent } from "./EventStream.ts"
import { nodeFetch, nodeRequest, readBody } from "./NodeFetch.ts"

/** A provider call that did not give a usable answer, described but not yet judged. */
export class WireError extends Data.TaggedError("WireError")<{
  readonly reason: "status" | "unreachable" | "timeout" | "malformed" | "stream_error"
  /** The HTTP status (for `status`). */
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** The provider's words (status, stream_error) or what went wrong (unreachable, malformed). */
  readonly message: string
}> {}

const timedOut = () => new WireError({ reason: "timeout", message: "The provider did not answer in time" })

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

export interface Connection {
  /** The API root, e.g. `https://api.openai.com/v1`; paths are appended to it. */
  readonly baseUrl: string
  readonly apiKey: string | undefined
  /** Sent with every request; they may replace `authorization` (Azure's `api-key`, say). */
  readonly headers: Readonly<Record<string, string>>
  /** A blocking call must be answered whole within this; a stream must start within it. */
  readonly timeoutMs: number
}

/** Where an opened stream delivers: each read's payloads together, then its end or its failure (once). */
export interface ChunkSink {
  /**
   * The payloads one read completed, in order; empty when it completed none (a comment, half an
   * event): the provider is still sending.
   */
  readonly chunks: (batch: ReadonlyArray<unknown>) => void
  readonly end: () => void
  readonly fail: (error: WireError) => void
}

/** A started event stream: delivery of its payloads, and a way to end it early. */
export interface ChunkStream {
  /** Starts delivery to `sink` (once). */
  readonly read: (sink: ChunkSink) => void
  /** Ends the request (an idle timeout, an interruption); the sink then hears a failure, or nothing more. */
  readonly abort: () => void
}

/** An opened stream its opener gives back: `release` ends the request unless the stream finished. */
export interface ReleasableChunkStream extends ChunkStream {
  readonly release: () => void
}

/**
 * The SDK's fetch: `nodeFetch` (node:http keep-alive sockets, and one resend of a request that met
 * a connection the provider had closed while idle). An error answer's body becomes OpenAI's error
 * shape around the provider's words, for the SDK to read.
 */
const providerFetch: typeof fetch = async (input, init) => {
  const response = await nodeFetch(input, init)
  if (response.ok) return response
  const text = await response.text()
  return new Response(JSON.stringify({ error: { message: providerMessage(response.status, text) } }), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
}

/** The messages and codes down an error's cause chain (fetch hides the socket's code two levels deep). */
const causeText = (error: unknown): string => {
  const parts: Array<string> = []
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    parts.push(typeof code === "string" && !current.message.includes(code) ? `${current.message} (${code})` : current.message)
    current = current.cause
  }
  return parts.join(": ") || String(error)
}

const headersOf = (headers: Headers | undefined): Record<string, string> => headers ? Object.fromEntries(headers.entries()) : {}

/** Any failure of the SDK, or of reading what it answered, as a described `WireError`. */
export const describe = (error: unknown): WireError => {
  if (error instanceof WireError) return error
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return timedOut()
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new WireError({ reason: "unreachable", message: causeText(error.cause ?? error) })
  }
  if (error instanceof OpenAI.APIError) {
    const words = (error.error as { message?: unknown } | undefined)?.message
    const message = typeof words === "string" ? words : error.message
    return error.status === undefined
      ? new WireError({ reason: "stream_error", message })
      : new WireError({ reason: "status", status: error.status, headers: headersOf(error.headers), message })
  }
  if (error instanceof SyntaxError) return new WireError({ reason: "malformed", message: error.message })
  // fetch's "terminated", a reset socket: the answer broke off.
  return new WireError({ reason: "unreachable", message: causeText(error) })
}

const headersRecord = (headers: http.IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value
  return out
}

/** Node's timers take at most 2^31 - 1 ms (24.8 days); a longer one fires at once. */
const longestTimer = 2_147_483_647

export class OpenAiClient {
  private readonly sdk: OpenAI
  /** The streamed chat's request, as the SDK would make it: the URL with the base's query, and the headers. */
  private readonly streamUrl: URL
  private readonly streamHeaders: Record<string, string>

  constructor(readonly connection: Connection) {
    const url = new URL(connection.baseUrl)
    const headers: Record<string, string | null> = {}
    if (url.username || url.password) {
      headers.authorization = `Basic ${
        Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")
      }`
    } else if (!connection.apiKey) headers.authorization = null
    for (const [name, value] of Object.entries(connection.headers)) headers[name.toLowerCase()] = value
    const query = Object.fromEntries(url.searchParams.entries())
    url.username = ""
    url.password = ""
    url.search = ""
    const baseURL = url.toString().replace(/\/+$/, "")
    this.streamUrl = new URL(`${baseURL}/chat/completions`)
    for (const [name, value] of Object.entries(query)) this.streamUrl.searchParams.set(name, value)
    // A user agent, as the SDK sends its own: some providers' front doors turn away requests without one.
    this.streamHeaders = { "content-type": "application/json", accept: "text/event-stream", "user-agent": `Cairn/${cairnVersion}` }
    if (connection.apiKey) this.streamHeaders.authorization = `Bearer ${connection.apiKey}`
    for (const [name, value] of Object.entries(headers)) {
      if (value === null) delete this.streamHeaders[name]
      else this.streamHeaders[name] = value
    }
    this.sdk = new OpenAI({
      baseURL,
      // The SDK insists on a key; without one, the authorization header is removed above.
      apiKey: connection.apiKey || "none",
      organization: null,
      project: null,
      defaultHeaders: headers,
      defaultQuery: Object.keys(query).length > 0 ? query : undefined,
      maxRetries: 0,
      timeout: connection.timeoutMs,
      fetch: providerFetch,
      logLevel: "off"
    })
  }

  /**
   * A blocking call answered with a JSON object, whole within the timeout: interrupting it (or the
   * timeout) aborts the request, including a body that stopped halfway.
   */
  private blocking(call: (signal: AbortSignal) => PromiseLike<unknown>, timeoutMs = this.connection.timeoutMs) {
    return Effect.tryPromise({ try: (signal) => call(signal), catch: describe }).pipe(
      Effect.timeoutFail({
        duration: timeoutMs,
        onTimeout: timedOut
      }),
      Effect.flatMap((reply) => {
        // The SDK answers text when the content type is not JSON; a provider may still send JSON.
        const value = typeof reply === "string" ? parseJson(reply) : reply
        return value !== null && typeof value === "object"
          ? Effect.succeed(value)
          : Effect.fail(new WireError({ reason: "malformed", message: `the body is not JSON: ${String(reply).slice(0, 200)}` }))
      })
    )
  }

  chat(body: Record<string, unknown>): Effect.Effect<object, WireError> {
    return this.blocking((signal) => this.sdk.chat.completions.create(body as never, { signal }))
  }

  embeddings(body: Record<string, unknown>): Effect.Effect<object, WireError> {
    return this.blocking((signal) => this.sdk.embeddings.create(body as never, { signal }))
  }

  transcribe(model: string, audio: Uint8Array, fileName: string, mimeType: string): Effect.Effect<object, WireError> {
    return this.blocking(async (signal) =>
      this.sdk.audio.transcriptions.create(
        { model, file: await toFile(audio, fileName, { type: mimeType }) },
        { signal }
      )
    )
  }

  /** The provider's model list, as it sent it (`{data: [...]}`). */
  models(timeoutMs: number): Effect.Effect<object, WireError> {
    return this.blocking((signal) => this.sdk.models.list({ signal, timeout: timeoutMs }).then((page) => ({ data: page.data })), timeoutMs)
  }

  /**
   * Opens a streamed chat completion: succeeds once a 2xx event-stream answer's headers are in. A
   * 2xx that is not an event stream (a provider that ignored `stream: true`) fails, with its error
   * message if it carries one. An `error` event or payload ends the stream with the provider's
   * words. Closing the scope ends the request unless the stream finished (its connection is then
   * kept for the next call).
   */
  chatStream(body: Record<string, unknown>): Effect.Effect<ChunkStream, WireError, Scope.Scope> {
    return Effect.acquireRelease(this.openChatStream(body), (stream) => Effect.sync(() => stream.release()))
  }

  /**
   * `chatStream` without a scope, for a caller that releases the stream itself (in an
   * `acquireUseRelease`, one region where a scope costs several): `release` ends the request unless
   * the stream finished. Opening stays interruptible: a cancel before the provider answers ends it.
   */
  openChatStream(body: Record<string, unknown>): Effect.Effect<ReleasableChunkStream, WireError> {
    const controller = new AbortController()
    const { signal } = controller
    const payload = JSON.stringify({ ...body, stream: true })
    const open = async (): Promise<http.IncomingMessage> => {
      const response = await nodeRequest(this.streamUrl, { method: "POST", headers: this.streamHeaders, payload, signal })
      const status = response.statusCode ?? 0
      const type = String(response.headers["content-type"] ?? "").toLowerCase()
      const ok = status >= 200 && status < 300
      if (ok && type.includes("text/event-stream")) return response
      const text = (await readBody(response, signal)).toString("utf8")
      if (!ok) {
        throw new WireError({ reason: "status", status, headers: headersRecord(response.headers), message: providerMessage(status, text) })
      }
      const parsed = parseJson(text) as { error?: unknown } | undefined
      throw parsed && typeof parsed === "object" && parsed.error
        ? new WireError({ reason: "stream_error", message: providerMessage(undefined, text) })
        : new WireError({ reason: "malformed", message: `expected an event stream, got ${type || "no content type"}` })
    }
    // The opening's timeout (to the headers, or the whole of an error answer) is a timer on the
    // request's own abort, not a race of fibers: a stream waiting on its model's first byte holds
    // no fiber but its own.
    const opened = Effect.async<http.IncomingMessage, WireError>((resume) => {
      let expired = false
      const timer = setTimeout(() => {
        expired = true
        controller.abort()
      }, Math.min(this.connection.timeoutMs, longestTimer))
      open().then(
        (response) => {
          clearTimeout(timer)
          resume(Effect.succeed(response))
        },
        (error: unknown) => {
          clearTimeout(timer)
          resume(Effect.fail(expired ? timedOut() : describe(error)))
        }
      )
      return Effect.sync(() => {
        clearTimeout(timer)
        controller.abort()
      })
    })
    return Effect.interruptible(Effect.map(opened, (response) => streamOf(response, controller)))
  }
}

/**
 * An event-stream answer's payloads, a read at a time, from the socket's own events: text is
 * decoded as it comes, events after `[DONE]` are ignored (the body is still read to its end, so
 * the connection is kept), and a body that breaks off before its end is a failure worth a retry.
 */
const streamOf = (response: http.IncomingMessage, controller: AbortController): ReleasableChunkStream => {
  let finished = false
  return {
    read: (sink) => {
      const decoder = new EventStreamDecoder()
      const events: Array<ServerSentEvent> = []
      let done = false
      let settled = false
      // The error is made only when it is told: an error captures a stack trace, and every
      // stream's socket closes after its end.
      const fail = (reason: WireError["reason"], message: string) => {
        if (settled) return
        settled = true
        sink.fail(new WireError({ reason, message }))
      }
      /** The decoded events as payloads to the sink; false when one was the provider's failure. */
      const deliver = (): boolean => {
        const batch: Array<unknown> = []
        for (const sse of events) {
          if (done) break
          const item = readChatEvent(sse)
          if (item._tag === "Done") done = true
          else if (item._tag === "Payload") batch.push(item.value)
          else {
            events.length = 0
            if (batch.length > 0) sink.chunks(batch)
            fail(item.reason, item.message)
            return false
          }
        }
        events.length = 0
        sink.chunks(batch)
        return true
      }
      response.setEncoding("utf8")
      response.on("data", (text: string) => {
        if (settled) return
        decoder.push(text, events)
        deliver()
      })
      response.on("end", () => {
        if (settled) return
        if (!response.complete) return fail("unreachable", "terminated")
        decoder.end(events)
        if (events.length > 0 && !deliver()) return
        settled = true
        finished = true
        sink.end()
      })
      response.on("error", (error) => fail("unreachable", causeText(error)))
      response.on("close", () => fail("unreachable", "the connection closed before the answer's end"))
    },
    abort: () => controller.abort(),
    release: () => {
      if (!finished) controller.abort()
    }
  }
}
