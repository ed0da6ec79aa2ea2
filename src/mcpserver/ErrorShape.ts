/**
 * Every HTTP error answered on `/mcp` as a JSON-RPC error object, so an MCP client shows a person
 * what went wrong: `{"jsonrpc": "2.0", "error": {"code", "message"}, "id": null}`. The status stays
 * (a client needs the 401 to know it must authenticate), and so do its headers (Retry-After, CORS);
 * a 401 also gets its `WWW-Authenticate` challenge pointing to the resource metadata. Errors that
 * are JSON-RPC already (the SDK's 400, 406, 415) and successes pass as they are.
 *
 * A pre-response handler, as for `/v1`: the authentication middleware fails before the `/mcp`
 * handler runs, and the platform writes an error's response before an outer middleware sees it.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { issuePath } from "../contract/Errors.ts"
import { challenge, mcpPath, publicOrigin } from "./Discovery.ts"

/**
 * The JSON-RPC code of an HTTP failure. JSON-RPC leaves -32000 to -32099 to the server: -32001 not
 * authenticated, -32003 forbidden, -32000 any other refusal (as the SDK's own transport errors).
 */
export const jsonRpcCode = (status: number): number => {
  if (status === 401) return -32001
  if (status === 403) return -32003
  if (status === 400 || status === 413 || status === 422) return -32600
  if (status >= 500) return -32603
  return -32000
}

/** What a `{detail}` says: the text, or each issue of a validation as `field: message`. */
const detailText = (detail: unknown): string => {
  if (typeof detail === "string") return detail
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: ReadonlyArray<unknown>; msg?: unknown }) => {
        const where = issuePath(issue.loc ?? [])
        return where ? `${where}: ${String(issue.msg)}` : String(issue.msg)
      })
      .join("; ")
  }
  return "Request failed"
}

/** A 401's message: what was wrong, and what the endpoint takes instead. */
const unauthorizedText = (detail: string) =>
  `${detail}: ${mcpPath} takes a Cairn API key (the static key or a scoped ask_ key) or a Cairn user or widget token, sent as "Authorization: Bearer <key>"`

const decoder = new TextDecoder()

const parsedBody = (response: HttpServerResponse.HttpServerResponse): unknown => {
  if (response.body._tag !== "Uint8Array") return undefined
  try {
    return JSON.parse(decoder.decode(response.body.body))
  } catch {
    return undefined
  }
}

/** `response` as the JSON-RPC error it is, keeping the status and headers; anything else unchanged. */
export const reshape = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 400) return response
  const body = parsedBody(response)
  if (body === null || typeof body !== "object" || !("detail" in body)) return response
  const detail = detailText(body.detail)
  const unauthorized = response.status === 401
  const message = unauthorized ? unauthorizedText(detail) : detail
  const { "content-type": _type, "content-length": _length, ...headers } = response.headers
  const shaped = HttpServerResponse.setHeaders(
    HttpServerResponse.unsafeJson({ jsonrpc: "2.0", error: { code: jsonRpcCode(response.status), message }, id: null }, {
      status: response.status
    }),
    headers
  )
  if (!unauthorized) return shaped
  const tokenSent = /^bearer\s+\S/i.test(request.headers.authorization ?? "")
  return HttpServerResponse.setHeader(shaped, "www-authenticate", challenge(publicOrigin(request), tokenSent, detail))
}

const isMcpPath = (url: string) => url === mcpPath || url.startsWith(`${mcpPath}?`)

const reshapeBeforeSending = HttpApp.appendPreResponseHandler((request, response) => Effect.succeed(reshape(request, response)))

/** Gives the errors answered on `/mcp` the JSON-RPC shape; other paths pass untouched. */
export const mcpErrorShape = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) => (isMcpPath(request.url) ? Effect.zipRight(reshapeBeforeSending, app) : app)
  )
