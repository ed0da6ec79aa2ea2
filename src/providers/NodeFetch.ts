/**
 * Provider requests over node:http(s) keep-alive agents: `nodeRequest` (the streamed chat's, which
 * reads the response itself) and `nodeFetch`, the `fetch` the `openai` SDK is given (its documented
 * `fetch` option) for every other call. Node's built-in fetch (undici) costs ~450 µs of CPU a call
 * more than the socket work itself (`bench/providerCall.ts`), and every chat turn and proxied
 * completion makes at least one call. The SDK still does the protocol of its calls (request
 * building, errors); this only moves bytes. Request bodies other than text or bytes (multipart
 * uploads) take the built-in fetch.
 *
 * A request that meets a kept-alive socket the provider closed while idle never arrived, so it is
 * sent once more on a fresh one; once any answer has started it is never resent.
 */
import * as http from "node:http"
import * as https from "node:https"

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 256 })
}

const headersObject = (headers: RequestInit["headers"]): Record<string, string> => {
  const out: Record<string, string> = {}
  if (!headers) return out
  if (headers instanceof Headers) headers.forEach((value, key) => (out[key] = value))
  else if (Array.isArray(headers)) { for (const [key, value] of headers) out[key!.toLowerCase()] = value! }
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

export interface NodeRequest {
  readonly method: string
  /** Lower-case names. */
  readonly headers: Record<string, string>
  readonly payload?: string | Uint8Array | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * One request over the keep-alive agents, answering the response as it starts (its body unread).
 * A request that met a kept-alive socket the provider had closed is sent once more; failures are
 * fetch's shape (`TypeError("fetch failed")` with the socket's error as its cause), an abort the
 * signal's own `AbortError`.
 */
export const nodeRequest = (url: URL, init: NodeRequest): Promise<http.IncomingMessage> => {
  const transport = url.protocol === "https:" ? https : http
  const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"]
  // The body as given, not copied: a small copy would come from Node's shared 8 KB pool and, held
  // for a resend while the answer streams, pin a whole slab per open call.
  const { payload, signal } = init
  const headers = payload === undefined
    ? init.headers
    : { ...init.headers, "content-length": String(typeof payload === "string" ? Buffer.byteLength(payload) : payload.byteLength) }
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const send = (resent: boolean) => {
      let answered = false
      const request = transport.request(url, { method: init.method, headers, agent, ...(signal ? { signal } : {}) }, (response) => {
        answered = true
        resolve(response)
      })
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (!resent && !answered && request.reusedSocket && !signal?.aborted && staleSocket(error)) return send(true)
        // An abort is the caller's, reported as fetch reports it.
        reject(error.name === "AbortError" ? error : fetchFailed(error))
      })
      request.end(payload)
    }
    send(false)
  })
}

/** A whole body, or fetch's "terminated" when the connection broke off before its end. */
export const readBody = (response: http.IncomingMessage, signal?: AbortSignal): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    response.on("data", (chunk: Buffer) => chunks.push(chunk))
    response.on("end", () => (response.complete ? resolve(Buffer.concat(chunks)) : reject(fetchFailed(new Error("terminated")))))
    response.on("error", (error) => reject(signal?.aborted ? error : fetchFailed(error)))
  })

export const nodeFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const body = init.body
  if (input instanceof Request || (body != null && typeof body !== "string" && !(body instanceof Uint8Array))) {
    return fetch(input, init)
  }
  const url = typeof input === "string" ? new URL(input) : input
  const method = init.method ?? "GET"
  const signal = init.signal ?? undefined
  const response = await nodeRequest(url, { method, headers: headersObject(init.headers), payload: body ?? undefined, signal })
  const status = response.statusCode ?? 0
  const meta = { status, statusText: response.statusMessage ?? "", headers: responseHeaders(response.rawHeaders) }
  if (nullBodyStatus(status) || method === "HEAD") {
    response.resume()
    return new Response(null, meta)
  }
  // Read whole (cheaper than a web stream): the SDK's calls here are blocking ones, which read the
  // whole answer anyway; the streamed chat reads its socket itself (`nodeRequest`).
  return new Response(await readBody(response, signal), meta)
}
