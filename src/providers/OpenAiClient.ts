/**
 * One provider connection through the `openai` SDK: chat (blocking and streamed), embeddings,
 * audio transcription and the model list. The SDK does the wire (requests, headers, multipart,
 * server-sent events); this file configures it for an OpenAI-compatible server that may not be
 * OpenAI, and describes every failure as a `WireError` (what it means, a retry, a 429 or a 502, is
 * decided in `Upstream.ts`), with the provider's own words from an error body.
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
import OpenAI, { toFile } from "openai"
import { Stream as SseStream } from "openai/core/streaming"
import { nodeFetch } from "./NodeFetch.ts"

/** A provider call that did not give a usable answer, described but not yet judged. */
export class WireError extends Data.TaggedError("WireError")<{
  readonly reason: "status" | "unreachable" | "timeout" | "malformed" | "stream_error"
  /** The HTTP status (for `status`). */
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** The provider's words (status, stream_error) or what went wrong (unreachable, malformed). */
  readonly message: string
}> {}

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

/** A started event stream: its payloads in order, and a way to end it early. */
export interface ChunkStream {
  readonly chunks: AsyncIterator<unknown>
  /** Ends the request (an idle timeout, an interruption); the pending read then ends. */
  readonly abort: () => void
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

const headersOf = (headers: Headers | undefined): Record<string, string> =>
  headers ? Object.fromEntries(headers.entries()) : {}

/** Any failure of the SDK, or of reading what it answered, as a described `WireError`. */
export const describe = (error: unknown): WireError => {
  if (error instanceof WireError) return error
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new WireError({ reason: "timeout", message: "The provider did not answer in time" })
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

/**
 * The body with a blank line after its end, so an event the provider left unterminated when it
 * closed the stream is delivered rather than dropped (a lenient reading, as the earlier client had).
 */
const terminated = (response: Response): Response => {
  if (!response.body) return response
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({ flush: (controller) => controller.enqueue(blankLine) })
  )
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}
const blankLine = new TextEncoder().encode("\n\n")

/** Node's timers take at most 2^31 - 1 ms (24.8 days); a longer one fires at once. */
const longestTimer = 2_147_483_647

export class OpenAiClient {
  private readonly sdk: OpenAI

  constructor(readonly connection: Connection) {
    const url = new URL(connection.baseUrl)
    const headers: Record<string, string | null> = {}
    if (url.username || url.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
    } else if (!connection.apiKey) headers.authorization = null
    for (const [name, value] of Object.entries(connection.headers)) headers[name.toLowerCase()] = value
    const query = Object.fromEntries(url.searchParams.entries())
    url.username = ""
    url.password = ""
    url.search = ""
    this.sdk = new OpenAI({
      baseURL: url.toString().replace(/\/+$/, ""),
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
        onTimeout: () => new WireError({ reason: "timeout", message: "The provider did not answer in time" })
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
    const controller = new AbortController()
    // The opening's timeout is a timer on the request's own abort, not a race of fibers: a stream
    // waiting on its model's first byte holds no fiber but its own (a race forks two, and
    // tryPromise's signal is one more AbortController a call).
    const opened = Effect.async<Response, WireError>((resume) => {
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        controller.abort()
      }, Math.min(this.connection.timeoutMs, longestTimer))
      this.sdk.chat.completions
        .create({ ...body, stream: true } as never, { signal: controller.signal })
        .asResponse()
        .then(
          (response) => {
            clearTimeout(timer)
            resume(Effect.succeed(response))
          },
          (error: unknown) => {
            clearTimeout(timer)
            resume(Effect.fail(timedOut ? new WireError({ reason: "timeout", message: "The provider did not answer in time" }) : describe(error)))
          }
        )
      return Effect.sync(() => {
        clearTimeout(timer)
        controller.abort()
      })
    })
    const open = opened.pipe(
      Effect.flatMap((response) => {
        const type = response.headers.get("content-type") ?? ""
        if (type.toLowerCase().includes("text/event-stream")) return Effect.succeed(this.chunksOf(response, controller))
        return Effect.flatMap(
          Effect.tryPromise({ try: () => response.text(), catch: describe }),
          (text) => {
            const parsed = parseJson(text) as { error?: unknown } | undefined
            return Effect.fail(
              parsed && typeof parsed === "object" && parsed.error
                ? new WireError({ reason: "stream_error", message: providerMessage(undefined, text) })
                : new WireError({ reason: "malformed", message: `expected an event stream, got ${type || "no content type"}` })
            )
          }
        )
      })
    )
    return Effect.acquireRelease(Effect.interruptible(open), (stream) => Effect.sync(() => stream.release()))
  }

  private chunksOf(response: Response, controller: AbortController): ChunkStream & { release: () => void } {
    let finished = false
    const events = SseStream.fromSSEResponse<{ event: string | null; data: unknown }>(terminated(response), controller, this.sdk, true)[
      Symbol.asyncIterator
    ]()
    const chunks: AsyncIterator<unknown> = {
      next: async () => {
        const next = await events.next().catch((error: unknown) => {
          throw describe(error)
        })
        if (next.done) {
          finished = true
          return next
        }
        const { event, data } = next.value
        if (event === "error") {
          const words = (data as { message?: unknown; error?: { message?: unknown } } | null) ?? {}
          const message = typeof words.message === "string" ? words.message : typeof words.error?.message === "string" ? words.error.message : JSON.stringify(data)
          throw new WireError({ reason: "stream_error", message })
        }
        return { done: false, value: data }
      }
    }
    return {
      chunks,
      abort: () => controller.abort(),
      release: () => {
        if (!finished) controller.abort()
      }
    }
  }
}
