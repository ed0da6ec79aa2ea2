/**
 * MCP servers Cairn connects to as a client: what an admin configures (over the API or in
 * MCP_SERVERS_FILE) and what a read shows, secrets masked and the connection's live state beside.
 */
import { Schema } from "effect"
import { headerNamePattern, headerValueMessage, isHeaderSafe } from "../contract/Params.ts"

const all = { errors: "all" } as const

/** A server's name: a path segment and the middle of its tools' names (`mcp:<name>/<tool>`). */
export const McpServerName = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,62}$/, {
    message: () => "Expected 1-63 characters: lower-case letters, digits, '-' and '_', starting with a letter or digit"
  })
)

export const McpTransport = Schema.Literal("stdio", "http")
export type McpTransport = typeof McpTransport.Type

/** Where a server's configuration lives: the admin API, or MCP_SERVERS_FILE (read-only here). */
export const McpSource = Schema.Literal("api", "file")
export type McpSource = typeof McpSource.Type

/** The live state of the connection in this server process. */
export const McpStatus = Schema.Literal("connected", "connecting", "failed", "disabled")
export type McpStatus = typeof McpStatus.Type

export const defaultTimeoutMs = 30_000

const SecretValue = Schema.String.pipe(Schema.maxLength(8192, { message: () => "Expected at most 8192 characters" }))

/**
 * Names to values, each name checked: a refined key of `Schema.Record` would drop a name that
 * does not match without a word, and a setting must never vanish unseen.
 */
const namedValues = (name: RegExp, message: string) =>
  Schema.Record({ key: Schema.String, value: SecretValue }).pipe(
    Schema.filter((values) => Object.keys(values).flatMap((key) => (name.test(key) ? [] : [{ path: [key], message }])))
  )
const EnvValues = namedValues(
  /^[A-Za-z_][A-Za-z0-9_]*$/,
  "Expected an environment variable name: letters, digits and '_', not starting with a digit"
)
const HeaderValues = namedValues(headerNamePattern, "Expected an HTTP header name").pipe(
  Schema.filter((headers) =>
    Object.entries(headers).flatMap(([name, value]) => (isHeaderSafe(value) ? [] : [{ path: [name], message: headerValueMessage }]))
  )
)

/** An http(s) URL without credentials in it: those belong in `headers`, which are kept secret. */
const McpUrl = Schema.String.pipe(
  Schema.pattern(/^https?:\/\/[^\s]+$/, { message: () => "Expected an http(s) URL" }),
  Schema.filter((url) => {
    try {
      const parsed = new URL(url)
      return parsed.username === "" && parsed.password === "" ? undefined : "Put credentials in headers, not in the URL"
    } catch {
      return "Expected an http(s) URL"
    }
  })
)

const TimeoutMs = Schema.Int.pipe(
  Schema.between(100, 600_000, { message: () => "Expected a whole number of milliseconds from 100 to 600000" })
)

/** What configures a server, whichever its transport; `transportRules` says which fields go with which. */
const serverFields = {
  transport: McpTransport,
  /** stdio: the program to start (found on PATH, or a path). */
  command: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1, { message: () => "Expected a command" })), { exact: true }),
  /** stdio: its arguments, shown in answers as they are: put secrets in `env`. */
  args: Schema.optionalWith(Schema.Array(Schema.String).pipe(Schema.maxItems(100)), { default: () => [] }),
  /** stdio: extra environment of the process; every value is sealed at rest and masked in answers. */
  env: Schema.optionalWith(EnvValues, { default: () => ({}) }),
  /** http: the streamable HTTP endpoint. */
  url: Schema.optionalWith(McpUrl, { exact: true }),
  /** http: headers of every request (`Authorization`, ...); every value is sealed at rest and masked in answers. */
  headers: Schema.optionalWith(HeaderValues, { default: () => ({}) }),
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** How long one tool call may take. */
  timeout_ms: Schema.optionalWith(TimeoutMs, { default: () => defaultTimeoutMs })
}

type ServerFields = Schema.Struct.Type<typeof serverFields>

/** A stdio server needs a command and takes no url or headers; an http server the other way round. */
const transportRules = (server: ServerFields) => {
  const issues: Array<{ readonly path: ReadonlyArray<string>; readonly message: string }> = []
  const refuse = (field: string, message: string) => issues.push({ path: [field], message })
  if (server.transport === "stdio") {
    if (server.command === undefined) refuse("command", "A stdio server needs the command that starts it")
    if (server.url !== undefined) refuse("url", "url is for transport http")
    if (Object.keys(server.headers).length > 0) refuse("headers", "headers are for transport http")
  } else {
    if (server.url === undefined) refuse("url", "An http server needs its url")
    if (server.command !== undefined) refuse("command", "command is for transport stdio")
    if (server.args.length > 0) refuse("args", "args are for transport stdio")
    if (Object.keys(server.env).length > 0) refuse("env", "env is for transport stdio")
  }
  return issues
}

/** A new server (the body of a create, and an entry of MCP_SERVERS_FILE). */
export const CreateMcpServer = Schema.Struct({ name: McpServerName, ...serverFields })
  .annotations({ parseOptions: all })
  .pipe(Schema.filter(transportRules))
  .annotations({ identifier: "CreateMcpServer", parseOptions: all })
export type CreateMcpServer = typeof CreateMcpServer.Type

/**
 * A replacement of a server's settings. A masked value a read showed, sent back unchanged, keeps
 * the stored secret; an `url` on another origin must send the headers again in the clear.
 */
export const UpdateMcpServer = Schema.Struct(serverFields)
  .annotations({ parseOptions: all })
  .pipe(Schema.filter(transportRules))
  .annotations({ identifier: "UpdateMcpServer", parseOptions: all })
export type UpdateMcpServer = typeof UpdateMcpServer.Type

const Timestamp = Schema.Date.annotations({ jsonSchema: { type: "string", format: "date-time" } })

export class McpServerView extends Schema.Class<McpServerView>("McpServerView")({
  name: Schema.String,
  transport: McpTransport,
  command: Schema.NullOr(Schema.String),
  args: Schema.Array(Schema.String),
  /** Masked: never a value itself. */
  env: Schema.Record({ key: Schema.String, value: Schema.String }),
  url: Schema.NullOr(Schema.String),
  /** Masked: never a value itself. */
  headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  enabled: Schema.Boolean,
  timeout_ms: Schema.Number,
  source: McpSource,
  /** The connection in the server process that answered. */
  status: McpStatus,
  /** Why it is not connected (when failed, or connecting again after a failure). */
  error: Schema.NullOr(Schema.String),
  /** The tools it offers, as bots name them (`mcp:<name>/<tool>`). */
  tools: Schema.Array(Schema.String),
  last_connected_at: Schema.NullOr(Timestamp),
  /** The stdio server's process while connected. */
  pid: Schema.NullOr(Schema.Number),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class McpServerList extends Schema.Class<McpServerList>("McpServerList")({
  servers: Schema.Array(McpServerView)
}) {}

/** A tool's name as bots see it, and the source its registration carries. */
export const mcpToolName = (server: string, tool: string) => `mcp:${server}/${tool}`
export const mcpToolSource = (server: string) => `mcp:${server}`
