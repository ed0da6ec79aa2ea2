/** What `/mcp` can refuse over HTTP, with its status (failures inside MCP are JSON-RPC errors or `isError` results). */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class McpMethodNotAllowed extends Schema.TaggedError<McpMethodNotAllowed>()(
  "McpMethodNotAllowed",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 405,
    description: "Cairn's MCP server is stateless: no server-sent stream (GET) and no session to end (DELETE); the Allow header says POST"
  })
) {}
