/**
 * Cairn's MCP server as an MCP client meets its errors, through the official SDK's client: HTTP
 * failures on /mcp with a JSON-RPC error body a person can read (a 401 keeps its status, names what
 * the endpoint takes and points to the resource metadata in WWW-Authenticate), the OAuth Protected
 * Resource Metadata (RFC 9728) as the SDK's own discovery reads it, and the errors inside MCP:
 * unknown tool -32602, unknown method -32601, a malformed request -32602 (not -32603), a tool or a
 * bot run that fails an isError result.
 */
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { EmptyResultSchema, ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const mcpHeaders = { accept: "application/json, text/event-stream", "content-type": "application/json" }
const mcpScopes = ["chat", "documents:read", "bots:read", "workspaces.files:read"]

describe.each(backends)("MCP server errors and authorization discovery (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  const open: Array<Client> = []

  const connect = async (token: string | null) => {
    const client = new Client({ name: "cairn-test", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: token === null ? {} : { headers: { Authorization: `Bearer ${token}` } }
    })
    await client.connect(transport)
    open.push(client)
    return client
  }
  /** One JSON-RPC request to /mcp as it goes on the wire. */
  const rpc = (body: unknown, auth?: string | null) =>
    server.request("/mcp", { method: "POST", headers: mcpHeaders, body: JSON.stringify(body), ...(auth === undefined ? {} : { auth }) })
  const textOf = (result: Record<string, unknown>) => (result.content as Array<{ text: string }>).map((part) => part.text).join("\n")

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "0" } })
  })
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()))
    llm.reset()
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("tells an SDK client with a wrong key, or none, what is wrong in words, with the HTTP status 401 (not -32603)", async () => {
    const wrong = await connect("ask_not-a-real-key").then(() => null, (error: Error & { code?: number }) => error)
    expect(wrong?.code).toBe(401)
    expect(wrong?.code).not.toBe(ErrorCode.InternalError)
    expect(wrong?.message).toContain("Invalid or expired credentials")
    expect(wrong?.message).toContain("Authorization: Bearer <key>")

    const none = await connect(null).then(() => null, (error: Error & { code?: number }) => error)
    expect(none?.code).toBe(401)
    expect(none?.message).toContain("Not authenticated")
  })

  it("answers a 401 with a JSON-RPC error body and WWW-Authenticate pointing to the resource metadata", async () => {
    const metadataUrl = `${server.baseUrl}/.well-known/oauth-protected-resource/mcp`
    const missing = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" }, null)
    expect(missing.status).toBe(401)
    expect(missing.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}"`)
    const body = await json(missing)
    expect(body).toEqual({
      jsonrpc: "2.0",
      error: { code: -32001, message: expect.stringMatching(/^Not authenticated: \/mcp takes/) },
      id: null
    })

    const wrong = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" }, "ask_not-a-real-key")
    expect(wrong.status).toBe(401)
    const challenge = wrong.headers.get("www-authenticate")!
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`)
    expect(challenge).toContain(`error="invalid_token"`)
    // The SDK's own reading of the challenge, as an MCP client that discovers authorization does it.
    const read = extractWWWAuthenticateParams(new Response(null, { status: 401, headers: { "www-authenticate": challenge } }))
    expect(read.resourceMetadataUrl?.href).toBe(metadataUrl)
    expect(read.error).toBe("invalid_token")
    expect((await json(wrong)).error.message).toContain("Invalid or expired credentials")
  })

  it("serves the protected resource metadata (RFC 9728), without a key, as the SDK's discovery reads it", async () => {
    const forMcp = await server.request("/.well-known/oauth-protected-resource/mcp", { auth: null })
    expect(forMcp.status).toBe(200)
    const document = await json(forMcp)
    expect(document).toEqual({
      resource: `${server.baseUrl}/mcp`,
      bearer_methods_supported: ["header"],
      scopes_supported: mcpScopes,
      resource_name: "Cairn MCP server",
      resource_documentation: `${server.baseUrl}/docs`
    })
    // No authorization server: Cairn takes its own keys only, so a client is not sent into an OAuth flow.
    expect(document).not.toHaveProperty("authorization_servers")

    const discovered = await discoverOAuthProtectedResourceMetadata(`${server.baseUrl}/mcp`)
    expect(discovered.resource).toBe(`${server.baseUrl}/mcp`)

    const forServer = await json(await server.request("/.well-known/oauth-protected-resource", { auth: null }))
    expect(forServer).toMatchObject({ resource: server.baseUrl, bearer_methods_supported: ["header"], scopes_supported: mcpScopes })

    const proxied = await server.request("/.well-known/oauth-protected-resource/mcp", {
      auth: null,
      headers: { "x-forwarded-proto": "https", "x-forwarded-host": "cairn.example.org" }
    })
    expect((await json(proxied)).resource).toBe("https://cairn.example.org/mcp")
  })

  it("answers an unknown tool -32602, an unknown method -32601 and a malformed request -32602, each in words", async () => {
    const client = await connect((await createKey(server, ["chat"])).key)
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message: expect.stringContaining("Unknown tool: no_such_tool")
    })
    await expect(client.request({ method: "prompts/list" }, EmptyResultSchema)).rejects.toMatchObject({ code: ErrorCode.MethodNotFound })

    // The SDK checked requests before Cairn's handlers and answered a mismatch -32603 (internal error).
    const noUri = await json(await rpc({ jsonrpc: "2.0", id: 7, method: "resources/read", params: {} }))
    expect(noUri.id).toBe(7)
    expect(noUri.error.code).toBe(ErrorCode.InvalidParams)
    expect(noUri.error.message).toMatch(/Invalid resources\/read request: params\.uri: .*expected string/)
    const badCursor = await json(await rpc({ jsonrpc: "2.0", id: 8, method: "tools/list", params: { cursor: 5 } }))
    expect(badCursor.error).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining("params.cursor") })
    const noName = await json(await rpc({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { arguments: {} } }))
    expect(noName.error.code).toBe(ErrorCode.InvalidParams)
  })

  it("answers a tool whose bot run fails, and a tool outside the key's scopes, as isError results", async () => {
    const client = await connect((await createKey(server, ["chat"])).key)
    llm.script({ status: 500 })
    const failed = await client.callTool({ name: "chat_with_bot", arguments: { message: "Hi" } })
    expect(failed.isError).toBe(true)
    expect(textOf(failed).length).toBeGreaterThan(0)

    const outside = await client.callTool({ name: "list_bots", arguments: {} })
    expect(outside.isError).toBe(true)
    expect(textOf(outside)).toBe("Missing required scope: bots:read (list_bots needs it)")
  })

  it("answers other HTTP refusals on /mcp as JSON-RPC errors too, keeping the status", async () => {
    const tooLarge = await server.request("/mcp", {
      method: "POST",
      headers: { ...mcpHeaders, "content-length": String(2 * 1024 * 1024) },
      body: "x".repeat(2 * 1024 * 1024)
    })
    expect(tooLarge.status).toBe(413)
    const body = await json(tooLarge)
    expect(body).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 }, id: null })
    expect(body.error.message.length).toBeGreaterThan(0)

    const get = await server.request("/mcp", { method: "GET" })
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toBe("POST")
    expect(await json(get)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 }, id: null })
  })
})
