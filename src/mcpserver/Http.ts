/**
 * `/mcp` handlers: the authenticated request goes to the SDK's web-standard transport as a web
 * `Request`, and its web `Response` comes back as is. GET and DELETE are answered 405 (Allow: POST),
 * as the streamable HTTP transport asks of a server without a stream or sessions to offer. The
 * resource metadata (RFC 9728) names the URLs the client reached.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { ClientAddress } from "../access/ClientAddress.ts"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { ValidationError } from "../contract/Errors.ts"
import { mcpPath, publicOrigin, resourceMetadata } from "./Discovery.ts"
import { McpServer } from "./McpServer.ts"

const notAllowed = HttpServerResponse.unsafeJson(
  { detail: "Cairn's MCP server is stateless: POST JSON-RPC messages to /mcp" },
  { status: 405, headers: { allow: "POST" } }
)

export const McpServerHttpLive = HttpApiBuilder.group(CairnApi, "mcp", (handlers) =>
  Effect.gen(function*() {
    const mcp = yield* McpServer
    const clientAddress = yield* ClientAddress
    return handlers
      .handleRaw("call", ({ request }) =>
        Effect.gen(function*() {
          const principal = yield* Principal
          const web = yield* HttpServerRequest.toWeb(request).pipe(
            // Only a request without a usable Host header has no URL to give it.
            Effect.catchTag("RequestError", () => ValidationError.single(["header", "host"], "The request has no valid Host header"))
          )
          const address = clientAddress.of(request)
          return HttpServerResponse.fromWeb(yield* mcp.handle(web, { principal, address }))
        }))
      .handleRaw("stream", () => Effect.succeed(notAllowed))
      .handleRaw("terminate", () => Effect.succeed(notAllowed))
      .handle("mcpResourceMetadata", ({ request }) => Effect.succeed(resourceMetadata(publicOrigin(request), mcpPath)))
      .handle("resourceMetadata", ({ request }) => Effect.succeed(resourceMetadata(publicOrigin(request), "")))
  }))
