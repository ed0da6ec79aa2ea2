/**
 * The official MCP SDK, loaded on first use rather than with the server: the client side with the
 * first connection to an MCP server (Connections.ts), the server side with the first request to
 * `/mcp` (mcpserver/). With zod and ajv it was about 0.1 s of every start's CPU (bench/README.md,
 * "The server as one bundle"), and most installs use neither. Each side loads once.
 */

/** What `load` gives, loaded on the first call and shared after it. */
const loadedOnce = <A>(load: () => Promise<A>) => {
  let loading: Promise<A> | undefined
  return () => (loading ??= load())
}

export const loadClientSdk = loadedOnce(async () => {
  const [client, stdio, http, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return { client, stdio, http, types }
})

export type ClientSdk = Awaited<ReturnType<typeof loadClientSdk>>

export const loadServerSdk = loadedOnce(async () => {
  const [server, transport, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return { server, transport, types }
})

export type ServerSdk = Awaited<ReturnType<typeof loadServerSdk>>
