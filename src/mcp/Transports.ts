/**
 * The SDK side of a connection to an MCP server: the settings of the connections, their named
 * schedules, the transport for a server's settings, listing its tools, and reading what its
 * failures mean.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { Config, Data, Duration, Effect, Schedule } from "effect"
import type { ClientSdk } from "./Sdk.ts"
import type { OpenedServer } from "./Sealing.ts"

export const mcpConfig = Config.all({
  connectTimeoutMs: Config.integer("MCP_CONNECT_TIMEOUT_MS").pipe(Config.withDefault(20_000)),
  reconnectBaseMs: Config.integer("MCP_RECONNECT_BASE_MS").pipe(Config.withDefault(1000)),
  reconnectMaxMs: Config.integer("MCP_RECONNECT_MAX_MS").pipe(Config.withDefault(60_000)),
  pingMs: Config.integer("MCP_PING_MS").pipe(Config.withDefault(30_000)),
  resyncMs: Config.integer("MCP_RESYNC_MS").pipe(Config.withDefault(10_000))
})
export type McpConfig = Config.Config.Success<typeof mcpConfig>

/** Why a server is not connected; `upMs`: how long the connection that ended had lasted. */
export class McpUnavailable extends Data.TaggedError("McpUnavailable")<{ readonly reason: string; readonly upMs: number }> {}

/**
 * Between connection attempts: exponential from MCP_RECONNECT_BASE_MS, capped at
 * MCP_RECONNECT_MAX_MS, jittered; it starts over after a connection that had lasted that long,
 * so a server that crashes at once is not restarted in a tight loop and a healthy one that drops
 * is tried again soon.
 */
export const reconnectBackoff = (config: McpConfig) =>
  Schedule.exponential(Duration.millis(config.reconnectBaseMs)).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(config.reconnectMaxMs))),
    Schedule.jittered,
    Schedule.intersect(Schedule.identity<McpUnavailable>()),
    Schedule.resetWhen(([, failure]) => failure.upMs >= config.reconnectMaxMs)
  )

/** How often a connected server is pinged (a hung server or a silent network is noticed). */
export const pingEvery = (config: McpConfig) => Schedule.spaced(Duration.millis(config.pingMs))

/** How often the table is read again for changes made by another server process. */
export const resyncEvery = (config: McpConfig) => Schedule.spaced(Duration.millis(config.resyncMs))

/** An error's message, with its cause's when that says more (`fetch failed (connect ECONNREFUSED ...)`). */
export const messageOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as { cause?: unknown }).cause
  return cause instanceof Error && !error.message.includes(cause.message) ? `${error.message} (${cause.message})` : error.message
}

/**
 * Whether an error of an HTTP transport means the connection is gone: the SDK reports a dropped
 * stream or a refused request through `onerror` and leaves calls waiting, so the client is closed
 * then (which fails them) and the supervisor connects again. A 404 is a session the server forgot.
 */
export const connectionLost = (sdk: ClientSdk, error: unknown): boolean =>
  (error instanceof sdk.http.StreamableHTTPError && (error.code === 404 || error.code === -1)) ||
  error instanceof TypeError ||
  /SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts|fetch failed|ECONNREFUSED|ECONNRESET|terminated|other side closed|socket hang up/i
    .test(
      messageOf(error)
    )

/** Every tool the server lists, page by page (none when it offers no tools). */
export const listTools = (client: Client, timeoutMs: number) =>
  Effect.tryPromise({
    try: async (signal) => {
      if (!client.getServerCapabilities()?.tools) return []
      const tools: Array<Tool> = []
      let cursor: string | undefined
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { signal, timeout: timeoutMs })
        tools.push(...page.tools)
        cursor = page.nextCursor
      } while (cursor && tools.length < 10_000)
      return tools
    },
    catch: messageOf
  })

/** The transport of a server's settings; a stdio server's stderr goes to `onStderr`, line by line. */
export const transportFor = (sdk: ClientSdk, server: OpenedServer, onStderr: (line: string) => void): Transport => {
  if (server.transport === "stdio") {
    // The child gets the SDK's few inherited variables (HOME, PATH, ...) and its own env: none
    // of the server's secrets.
    const transport = new sdk.stdio.StdioClientTransport({
      command: server.command ?? "",
      args: [...server.args],
      env: { ...server.env },
      stderr: "pipe"
    })
    let partial = ""
    // Read always: an unread pipe would stall a child that writes much to stderr.
    transport.stderr?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) if (line.trim()) onStderr(line.trim())
    })
    return transport
  }
  return new sdk.http.StreamableHTTPClientTransport(new URL(server.url ?? ""), {
    requestInit: { headers: { ...server.headers } },
    // The SDK's own stream reconnection is off: a lost stream ends the session, which the
    // supervisor starts again (with the backoff, and a fresh status).
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 }
  })
}
