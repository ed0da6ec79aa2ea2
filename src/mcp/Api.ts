import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { pathParams } from "../contract/Params.ts"
import { McpServerConflict, McpServerNotFound } from "./Errors.ts"
import { CreateMcpServer, McpServerList, McpServerView, UpdateMcpServer } from "./Model.ts"

// Any name: one that could never have been created is simply not found (404), not a 422.
const namePath = pathParams({ name: Schema.String })

/**
 * Scopes. Reading takes `tools:read` (what lists the tools these servers add). Creating, changing
 * and deleting take `admin`: a stdio server is a program Cairn starts on its host with the
 * command an admin gives, which reaches everything the server process can (the server secret,
 * every sealed key), as a backup download does. Reconnecting changes nothing configured and
 * starts nothing new, so `settings:write` suffices, as it does for restarting an integration's
 * process by saving its settings.
 */
export class McpApi extends HttpApiGroup.make("mcpServers")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/mcp-servers")
      .addSuccess(McpServerList)
      .annotate(RequiredScope, "tools:read")
      .annotate(OpenApi.Description, "MCP servers Cairn uses as a client, with each connection's status, error and tools (secrets masked)")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/admin/mcp-servers/:name")
      .setPath(namePath)
      .addSuccess(McpServerView)
      .annotate(RequiredScope, "tools:read")
      .annotate(OpenApi.Description, "One MCP server with its connection's status, error and tools (secrets masked)")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/admin/mcp-servers")
      .setPayload(CreateMcpServer)
      .addSuccess(McpServerView, { status: 201 })
      .addError(detailBody(McpServerConflict))
      .annotate(RequiredScope, "admin")
      .annotate(
        OpenApi.Description,
        "Add an MCP server (stdio command or streamable HTTP url); env and header values are stored encrypted. Answers once the first connection attempt has settled (or MCP_CONNECT_TIMEOUT_MS passed)"
      )
  )
  .add(
    HttpApiEndpoint.put("update", "/api/v1/admin/mcp-servers/:name")
      .setPath(namePath)
      .setPayload(UpdateMcpServer)
      .addSuccess(McpServerView)
      .addError(detailBody(McpServerConflict))
      .annotate(RequiredScope, "admin")
      .annotate(
        OpenApi.Description,
        "Replace an MCP server's settings and reconnect it. An env or header value sent back masked keeps the stored one; a url on another origin must send the headers again (422 otherwise). 409 for a server of MCP_SERVERS_FILE"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/admin/mcp-servers/:name")
      .setPath(namePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(detailBody(McpServerConflict))
      .annotate(RequiredScope, "admin")
      .annotate(
        OpenApi.Description,
        "Disconnect and delete an MCP server; its tools are gone at once. 409 for a server of MCP_SERVERS_FILE"
      )
  )
  .add(
    HttpApiEndpoint.post("reconnect", "/api/v1/admin/mcp-servers/:name/reconnect")
      .setPath(namePath)
      .addSuccess(McpServerView)
      .addError(detailBody(McpServerConflict))
      .annotate(RequiredScope, "settings:write")
      .annotate(
        OpenApi.Description,
        "Drop the connection and connect again now (409 when the server is disabled); answers once the attempt has settled"
      )
  )
  .addError(detailBody(McpServerNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "MCP servers")
{}
