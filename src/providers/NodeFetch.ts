/**
 * The `fetch` the `openai` SDK is given (its documented `fetch` option): node:http(s) with
 * keep-alive agents. Node's built-in fetch (undici) costs ~450 µs of CPU a call more than the
 * socket work itself (`bench/providerCall.ts`), and every chat turn and proxied completion makes at
 * least one call. The SDK still does the protocol (request building, errors, server-sent events);
 * this only moves bytes. Request bodies other than text or bytes (multipart uploads) take the
 * built-in fetch.
 *
 * A request that meets a kept-alive socket the provider closed while idle never arrived, so it is
 * sent once more on a fresh one; once any answer has started it is never resent.
 */
import * as http from "node:http"
import * as https from "node:https"
import { Readable } from "node:stream"

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 256 })
}

const headersObject = (headers: RequestInit["headers"]): Record<string, string> => {
  const out: Record<string, string> = {}
  if (!headers) return out
  if (headers instanceof Headers) headers.forEach((value, key) => (out[key] = value))
  else if (Array.isArray(headers)) for (const [key, value] of headers) out[key!.toLowerCase()] = value!
  else for (const [key, value] of Object.entries(headers)) out[key.toLowerCase()] = String(value)
  return out
}

const responseHeaders = (raw: ReadonlyArray<string>): Headers => {
  const headers = new Headers()
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
  return headers
}

/** Bodies without content (204, 304, HEAD) must be null for `Response`. */
const nullBodyStatus = (status: number) => status === 101 || status === 204 || status === 205 || status === 304

/** Socket failures on reuse that mean the provider had closed the idle connection. */
const staleSocket = (error: NodeJS.ErrnoException) => error.code === "ECONNRESET" || error.code === "EPIPE"

/** fetch's failure shape, so the SDK reports it as a connection error with its cause. */
const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause })

export const nodeFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const body = init.body
  if (input instanceof Request || (body != null && typeof body !== "string" && !(body instanceof Uint8Array))) {
    return fetch(input, init)
  }
  const url = typeof input === "string" ? new URL(input) : input
  const transport = url.protocol === "https:" ? https : http
  const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"]
  // The body as given, not copied: a small copy would come from Node's shared 8 KB pool and, held
  // for a resend while the answer streams, pin a whole slab per open call.
  const payload = body == null ? undefined : body
  const headers = headersObject(init.headers)
  if (payload !== undefined) headers["content-length"] = String(typeof payload === "string" ? Buffer.byteLength(payload) : payload.byteLength)
  return new Promise<Response>((resolve, reject) => {
    const send = (resent: boolean) => {
      let answered = false
      const request = transport.request(
        url,
        { method: init.method ?? "GET", headers, agent, ...(init.signal ? { signal: init.signal } : {}) },
        (response) => {
          answered = true
          const status = response.statusCode ?? 0
          const meta = { status, statusText: response.statusMessage ?? "", headers: responseHeaders(response.rawHeaders) }
          if (nullBodyStatus(status) || init.method === "HEAD") {
            response.resume()
            return resolve(new Response(null, meta))
          }
          // Event streams are passed on as they arrive; anything else is read whole first (cheaper).
          if ((response.headers["content-type"] ?? "").toLowerCase().includes("text/event-stream")) {
            return resolve(new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, meta))
          }
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("end", () =>
            response.complete ? resolve(new Response(Buffer.concat(chunks), meta)) : reject(fetchFailed(new Error("terminated")))
          )
          response.on("error", (error) => reject(init.signal?.aborted ? error : fetchFailed(error)))
        }
      )
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (!resent && !answered && request.reusedSocket && !init.signal?.aborted && staleSocket(error)) return send(true)
        // An abort is the caller's, reported as fetch reports it.
        reject(error.name === "AbortError" ? error : fetchFailed(error))
      })
      request.end(payload)
    }
    send(false)
  })
}
