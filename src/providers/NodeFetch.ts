/**
 * A `fetch` for the openai SDK over node:http(s) with keep-alive agents. Node's built-in fetch
 * costs several hundred microseconds of CPU per call (web streams, abort signals, request objects);
 * this path costs a fraction of it, which is most of the proxy's overhead (bench/llmProxy.ts).
 * Request bodies other than text or bytes (multipart uploads) go through the built-in fetch.
 */
import * as http from "node:http"
import * as https from "node:https"
import { Readable } from "node:stream"

const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 })
const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256 })

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

export const nodeFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const body = init.body
  if (input instanceof Request || (body != null && typeof body !== "string" && !(body instanceof Uint8Array) && !(body instanceof ArrayBuffer))) {
    return fetch(input, init)
  }
  const url = typeof input === "string" ? new URL(input) : input
  const client = url.protocol === "https:" ? https : http
  const payload = body == null ? undefined : typeof body === "string" ? Buffer.from(body) : Buffer.from(body as ArrayBuffer)
  const headers = headersObject(init.headers)
  if (payload) headers["content-length"] = String(payload.length)
  // A keep-alive socket the server closed while it sat idle fails at once on reuse: that request
  // never reached the server, so it is sent again once on a fresh socket (Node's advice).
  const send = (retried: boolean): Promise<Response> => new Promise<Response>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: init.method ?? "GET",
        headers,
        agent: url.protocol === "https:" ? httpsAgent : httpAgent,
        ...(init.signal ? { signal: init.signal } : {})
      },
      (response) => {
        const status = response.statusCode ?? 0
        const meta = { status, statusText: response.statusMessage ?? "", headers: responseHeaders(response.rawHeaders) }
        if (nullBodyStatus(status) || init.method === "HEAD") {
          response.resume()
          return resolve(new Response(null, meta))
        }
        // Event streams are passed on as they arrive; anything else is read whole first (cheaper).
        if ((response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
          return resolve(new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, meta))
        }
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve(new Response(Buffer.concat(chunks), meta)))
        response.on("error", reject)
      }
    )
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (!retried && request.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE")) {
        send(true).then(resolve, reject)
      } else reject(error)
    })
    request.end(payload)
  })
  return send(false)
}
