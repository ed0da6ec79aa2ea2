/**
 * `/mcp`: Cairn as an MCP server over streamable HTTP. Declared here like every route, so it is
 * authenticated, rate-limited, in the OpenAPI document and in `/api/v1/discover`; what a caller
 * may do inside MCP (tools, resources) follows its scopes, checked per tool by the server.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { AUTHENTICATED, PUBLIC } from "../auth/Scopes.ts"
import { detailBody } from "../contract/Errors.ts"
import { mcpMetadataPath, metadataPath } from "./Discovery.ts"
import { McpMethodNotAllowed } from "./Errors.ts"
import { JsonRpcMessage, ProtectedResourceMetadata } from "./Model.ts"

const JsonRpcBody = Schema.Union(JsonRpcMessage, Schema.Array(JsonRpcMessage))

const metadataDescription = (of: string) =>
  `OAuth 2.0 Protected Resource Metadata (RFC 9728) of ${of}: the resource, the scopes MCP uses, bearer tokens in the Authorization header. ` +
  "No authorization server is listed: Cairn takes its own keys and tokens only (a 401 from /mcp points here in WWW-Authenticate)"

const stateless = "Cairn's MCP server keeps no session between requests, so it answers 405 (Allow: POST)."

export class McpServerApi extends HttpApiGroup.make("mcp")
  .add(
    HttpApiEndpoint.post("call", "/mcp")
      .setPayload(JsonRpcBody)
      .addSuccess(JsonRpcBody)
      .addSuccess(HttpApiSchema.Empty(202))
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(
        OpenApi.Description,
        "Model Context Protocol (streamable HTTP, stateless, JSON answers): send JSON-RPC with `Accept: application/json, text/event-stream`. " +
          "Tools and resources are offered by the key's scopes: chat_with_bot (chat), search_documents (documents:read), list_bots (bots:read), " +
          "workspace files as resources (workspaces.files:read). Every HTTP error is a JSON-RPC error body, a 401 with WWW-Authenticate: Bearer resource_metadata=...; protocol failures (406, 415, 400 bad JSON, 413 over 4 MiB unannounced) answer a JSON-RPC error body; a Content-Length past REQUEST_MAX_BYTES is a 413 {detail}; notifications answer 202"
      )
  )
  .add(
    HttpApiEndpoint.get("stream", "/mcp")
      .addError(detailBody(McpMethodNotAllowed))
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(OpenApi.Description, `MCP's server-to-client stream: not offered. ${stateless}`)
  )
  .add(
    HttpApiEndpoint.del("terminate", "/mcp")
      .addError(detailBody(McpMethodNotAllowed))
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(OpenApi.Description, `Ends an MCP session: there is none. ${stateless}`)
  )
  .add(
    HttpApiEndpoint.get("mcpResourceMetadata", mcpMetadataPath)
      .addSuccess(ProtectedResourceMetadata)
      .annotate(RequiredScope, PUBLIC)
      .annotate(OpenApi.Description, metadataDescription("the MCP endpoint /mcp"))
  )
  .add(
    HttpApiEndpoint.get("resourceMetadata", metadataPath)
      .addSuccess(ProtectedResourceMetadata)
      .annotate(RequiredScope, PUBLIC)
      .annotate(OpenApi.Description, metadataDescription("the server (its origin)"))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "MCP server")
{}
