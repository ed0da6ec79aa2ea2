/** What the MCP servers domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class McpServerNotFound extends Schema.TaggedError<McpServerNotFound>()(
  "McpServerNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No MCP server with that name" })
) {}

export class McpServerConflict extends Schema.TaggedError<McpServerConflict>()(
  "McpServerConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "The name is taken, the server is configured by MCP_SERVERS_FILE, or it is disabled"
  })
) {}
