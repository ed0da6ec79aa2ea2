/**
 * What Cairn's MCP server speaks beside the SDK's own protocol schemas: the JSON-RPC body as the
 * API documents it, each tool's arguments and structured result (their JSON Schemas are derived
 * from these, so a tool's declaration and its validation are one definition), and the URIs of
 * workspace files as resources. Contract-safe: effect and the contract only.
 */
import { Either, Schema } from "effect"
import { BotId } from "../bots/Model.ts"
import { isUuid } from "../contract/Params.ts"

/** A JSON-RPC 2.0 message as MCP sends it (a batch is an array of them); the SDK validates it whole. */
export const JsonRpcMessage = Schema.Struct(
  { jsonrpc: Schema.Literal("2.0") },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "JsonRpcMessage", description: "A JSON-RPC 2.0 request, notification or response (MCP streamable HTTP)" })

const NonBlank = (description: string) =>
  Schema.String.pipe(Schema.pattern(/\S/, { message: () => "Must not be blank" })).annotations({ description })

export const ChatWithBotArguments = Schema.Struct({
  message: NonBlank("What to say to the bot"),
  bot: Schema.optional(
    BotId.annotations({
      description: "The bot to talk to (see list_bots); default \"default\", or the only bot a bot-confined token may use"
    })
  ),
  session: Schema.optional(
    Schema.UUID.annotations({
      description:
        "The session to continue: the session_id a previous chat_with_bot answered. Without it, the caller's own MCP session with that bot"
    })
  )
})

export const ChatWithBotResult = Schema.Struct({
  response: Schema.String,
  session_id: Schema.UUID
})

export const SearchDocumentsArguments = Schema.Struct({
  query: NonBlank("What to look for: words or a question").pipe(Schema.maxLength(2_000)),
  limit: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(1, 100)).annotations({ description: "Most hits answered (default 10)" })
  ),
  integration_id: Schema.optional(Schema.String.annotations({ description: "Only documents stored by this integration (their source)" }))
})

export const DocumentHit = Schema.Struct({
  id: Schema.UUID,
  title: Schema.String,
  /** Where the document came from: the integration that stored it. */
  integration_id: Schema.String,
  session_id: Schema.NullOr(Schema.UUID),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** Fused rank score, higher is better. */
  score: Schema.Number,
  /** Cosine similarity of the best chunk; null when only full text found it. */
  similarity: Schema.NullOr(Schema.Number),
  /** The best-matching passage. */
  snippet: Schema.String
})

export const SearchDocumentsResult = Schema.Struct({ results: Schema.Array(DocumentHit) })

export const ListBotsArguments = Schema.Struct({})

export const BotSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  /** The model it runs on (the server's default when the bot names none). */
  model: Schema.String
})

export const ListBotsResult = Schema.Struct({ bots: Schema.Array(BotSummary) })

const workspacePrefix = "cairn://workspaces/"

/** The RFC 6570 template of workspace file URIs (`+` keeps the path's slashes). */
export const workspaceFileTemplate = `${workspacePrefix}{channel_id}/{+path}`

/** A workspace file's URI: each path segment percent-encoded, so `?`, `#` and `%` in names survive. */
export const workspaceFileUri = (channelId: string, filePath: string) =>
  `${workspacePrefix}${channelId}/${filePath.split("/").map(encodeURIComponent).join("/")}`

/**
 * The channel and path a workspace file URI names, or why it names none. Parsed by hand, not by
 * `URL` (which would resolve `..` before the workspace's own path rules could refuse it).
 */
export const parseWorkspaceFileUri = (uri: string): Either.Either<{ readonly channelId: string; readonly path: string }, string> => {
  if (!uri.startsWith(workspacePrefix)) return Either.left(`Not a Cairn workspace file URI: expected ${workspaceFileTemplate}`)
  const rest = uri.slice(workspacePrefix.length)
  const slash = rest.indexOf("/")
  const channelId = slash < 0 ? rest : rest.slice(0, slash)
  if (!isUuid(channelId)) return Either.left("The URI's channel id is not a UUID")
  const encoded = slash < 0 ? "" : rest.slice(slash + 1)
  if (/[?#]/.test(encoded)) return Either.left("A workspace file URI has no query or fragment (percent-encode '?' and '#' in names)")
  try {
    return Either.right({ channelId, path: encoded.split("/").map(decodeURIComponent).join("/") })
  } catch {
    return Either.left("The URI's path is not valid percent-encoding")
  }
}

/** OAuth 2.0 Protected Resource Metadata (RFC 9728) of `/mcp` or of the whole server. */
export const ProtectedResourceMetadata = Schema.Struct({
  resource: Schema.String.annotations({
    description: "The protected resource's identifier: the URL the metadata was asked for, less the well-known part"
  }),
  authorization_servers: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "OAuth authorization servers that issue tokens for it: none, since Cairn takes its own keys and tokens only"
  }),
  bearer_methods_supported: Schema.Array(Schema.Literal("header")).annotations({
    description: "The token is sent as Authorization: Bearer"
  }),
  scopes_supported: Schema.Array(Schema.String).annotations({ description: "The scopes that decide what an MCP client may use" }),
  resource_name: Schema.String,
  resource_documentation: Schema.String.annotations({ description: "Where a person reads how to get a key" })
}).annotations({ identifier: "ProtectedResourceMetadata" })
