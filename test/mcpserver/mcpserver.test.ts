/**
 * Cairn as an MCP server, through the official SDK's own client over streamable HTTP against the
 * in-process server: tools offered per scope, chat_with_bot answered by the fake LLM and continued
 * by its session id, document search, the bot list (and a widget token's confinement), workspace
 * files as resources with traversal refused, and the HTTP edge (401, 405, bad JSON; errors.test.ts has the rest).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { Scope } from "../../src/auth/Scopes.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const allTools = ["chat_with_bot", "list_bots", "search_documents"]

describe.each(backends)("MCP server (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  const open: Array<Client> = []

  /** An SDK client connected to /mcp with this bearer token (none when null). */
  const connect = async (token: string | null) => {
    const client = new Client({ name: "cairn-test", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: token === null ? {} : { headers: { Authorization: `Bearer ${token}` } }
    })
    await client.connect(transport)
    open.push(client)
    return client
  }
  const withScopes = async (...scopes: ReadonlyArray<Scope>) => connect((await createKey(server, scopes)).key)
  /** The text parts of a tool's result. */
  const textOf = (result: Record<string, unknown>) => (result.content as Array<{ type: string; text: string }>).map((part) => part.text)

  const makeChannel = async (name: string, botId = "default") => {
    const response = await server.request("/api/v1/admin/channels", {
      method: "POST",
      body: JSON.stringify({ name, bot_id: botId, workspace_enabled: true })
    })
    expect(response.status).toBe(201)
    return (await json(response)).id as string
  }
  const putFile = async (channel: string, path: string, body: { content: string; encoding?: string }) =>
    expect(
      (await server.request(`/api/v1/channels/${channel}/workspace/files/${path}`, { method: "PUT", body: JSON.stringify(body) })).status
    ).toBe(200)

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: {
        ...fakeLlmEnv(llm),
        // The fake's embeddings: the packaged word vectors would take seconds to load for one document.
        EMBEDDING_MODEL: "fake-embedding",
        LLM_MAX_RETRIES: "0"
      }
    })
  })
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()))
    llm.reset()
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("lists the tools a key's scopes grant: chat alone sees chat_with_bot, the static key all", async () => {
    const admin = await connect(server.apiKey)
    const all = await admin.listTools()
    expect(all.tools.map((t) => t.name).sort()).toEqual(allTools)
    const chatTool = all.tools.find((t) => t.name === "chat_with_bot")!
    expect(chatTool.inputSchema).toMatchObject({ type: "object", required: ["message"] })
    expect(Object.keys(chatTool.inputSchema.properties ?? {}).sort()).toEqual(["bot", "message", "session"])
    expect(admin.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} })

    const chatOnly = await withScopes("chat")
    expect((await chatOnly.listTools()).tools.map((t) => t.name)).toEqual(["chat_with_bot"])
    expect((await chatOnly.listResources()).resources).toEqual([])
    expect((await chatOnly.listResourceTemplates()).resourceTemplates).toEqual([])

    const readers = await withScopes("documents:read", "bots:read")
    expect((await readers.listTools()).tools.map((t) => t.name).sort()).toEqual(["list_bots", "search_documents"])
  })

  it("refuses a tool outside the key's scopes, naming the scope, and an unknown tool", async () => {
    const chatOnly = await withScopes("chat")
    const refused = await chatOnly.callTool({ name: "search_documents", arguments: { query: "anything" } })
    expect(refused.isError).toBe(true)
    expect(textOf(refused).join(" ")).toContain("Missing required scope: documents:read")
    await expect(chatOnly.callTool({ name: "no_such_tool", arguments: {} })).rejects.toMatchObject({ code: ErrorCode.InvalidParams })
  })

  it("answers chat_with_bot with the bot's text and continues the session it names", async () => {
    const client = await withScopes("chat")
    llm.script({ text: "The capital is Oslo." }, { text: "It has about 700,000 people." })
    const first = await client.callTool({ name: "chat_with_bot", arguments: { message: "What is the capital of Norway?" } })
    expect(first.isError).toBeFalsy()
    expect(textOf(first)[0]).toBe("The capital is Oslo.")
    const { session_id: sessionId } = first.structuredContent as { session_id: string }
    expect(textOf(first)[1]).toContain(sessionId)

    const second = await client.callTool({
      name: "chat_with_bot",
      arguments: { message: "How many people live there?", session: sessionId, bot: "default" }
    })
    expect(textOf(second)[0]).toBe("It has about 700,000 people.")
    expect((second.structuredContent as { session_id: string }).session_id).toBe(sessionId)
    // The second turn reached the model with the first one as history.
    const sent = llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages.map((m: { content: unknown }) => m.content)
    expect(sent).toEqual(expect.arrayContaining(["What is the capital of Norway?", "The capital is Oslo.", "How many people live there?"]))
  })

  it("answers chat_with_bot failures and bad arguments as isError results, never as HTTP errors", async () => {
    const client = await withScopes("chat")
    const unknownBot = await client.callTool({ name: "chat_with_bot", arguments: { message: "Hi", bot: "nobody" } })
    expect(unknownBot.isError).toBe(true)
    expect(textOf(unknownBot)[0]).toContain("nobody")

    const missing = await client.callTool({ name: "chat_with_bot", arguments: { bot: "default" } })
    expect(missing.isError).toBe(true)
    expect(textOf(missing)[0]).toMatch(/^Invalid arguments for chat_with_bot: message: is missing/)
    const misspelt = await client.callTool({ name: "chat_with_bot", arguments: { message: "Hi", bot_id: "default" } })
    expect(textOf(misspelt)[0]).toContain("bot_id")

    llm.script({ status: 500 })
    const failed = await client.callTool({ name: "chat_with_bot", arguments: { message: "Hi" } })
    expect(failed.isError).toBe(true)
  })

  it("searches the documents with scores and sources", async () => {
    await server.call((client) =>
      client.documents.create({
        payload: {
          title: "Glacier travel",
          content: "Crampons and an ice axe are needed for glacier travel above the snow line.",
          integration_id: "handbook"
        }
      })
    )
    const client = await withScopes("documents:read")
    const result = await client.callTool({ name: "search_documents", arguments: { query: "ice axe for glaciers", limit: 3 } })
    expect(result.isError).toBeFalsy()
    const { results } = result.structuredContent as { results: Array<Record<string, unknown>> }
    expect(results[0]).toMatchObject({ title: "Glacier travel", integration_id: "handbook" })
    expect(results[0]!.score).toBeGreaterThan(0)
    expect(JSON.parse(textOf(result)[0]!)).toEqual({ results })
  })

  it("lists the bots, and only its own to a bot-confined widget token", async () => {
    const botKey = await createKey(server, ["bots:read", "chat"])
    const created = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "helper", name: "Helper", description: "Helps", api_key_id: botKey.id })
    })
    expect(created.status).toBe(201)
    const reader = await withScopes("bots:read")
    const { bots } = (await reader.callTool({ name: "list_bots", arguments: {} })).structuredContent as {
      bots: Array<{ id: string; model: string }>
    }
    expect(bots.map((bot) => bot.id)).toEqual(expect.arrayContaining(["default", "helper"]))
    expect(bots.find((bot) => bot.id === "helper")).toMatchObject({ name: "Helper", description: "Helps", model: "fake-model" })

    const minted = await json(
      await server.request("/api/v1/widget-auth/mint", { method: "POST", body: JSON.stringify({ source_bot_id: "helper" }) })
    )
    const widget = await connect(minted.token)
    const confined = (await widget.callTool({ name: "list_bots", arguments: {} })).structuredContent as { bots: Array<{ id: string }> }
    expect(confined.bots.map((bot) => bot.id)).toEqual(["helper"])
    const elsewhere = await widget.callTool({ name: "chat_with_bot", arguments: { message: "Hi", bot: "default" } })
    expect(elsewhere.isError).toBe(true)
    expect(textOf(elsewhere)[0]).toContain("confined")
  })

  it("offers workspace files as resources, text and binary, and refuses a path out of the workspace", async () => {
    const channel = await makeChannel("MCP files")
    await putFile(channel, "notes/plan.md", { content: "# Plan\n\nClimb at dawn.\n" })
    await putFile(channel, "data/raw.bin", { content: Buffer.from([0, 159, 146, 150]).toString("base64"), encoding: "base64" })
    const client = await withScopes("workspaces.files:read")
    expect((await client.listTools()).tools).toEqual([])

    const { resources } = await client.listResources()
    const uris = resources.map((r) => r.uri)
    expect(uris).toEqual(
      expect.arrayContaining([`cairn://workspaces/${channel}/notes/plan.md`, `cairn://workspaces/${channel}/data/raw.bin`])
    )
    const [template] = (await client.listResourceTemplates()).resourceTemplates
    expect(template!.uriTemplate).toBe("cairn://workspaces/{channel_id}/{+path}")

    const text = await client.readResource({ uri: `cairn://workspaces/${channel}/notes/plan.md` })
    expect(text.contents).toEqual([{
      uri: `cairn://workspaces/${channel}/notes/plan.md`,
      mimeType: "text/markdown",
      text: "# Plan\n\nClimb at dawn.\n"
    }])
    const binary = await client.readResource({ uri: `cairn://workspaces/${channel}/data/raw.bin` })
    expect(binary.contents[0]).toMatchObject({
      mimeType: "application/octet-stream",
      blob: Buffer.from([0, 159, 146, 150]).toString("base64")
    })

    for (const escape of ["../../jwt_secret", "notes/%2e%2e/%2e%2e/%2e%2e/jwt_secret", "%2Fetc%2Fpasswd"]) {
      await expect(client.readResource({ uri: `cairn://workspaces/${channel}/${escape}` }), escape).rejects.toMatchObject({
        code: ErrorCode.InvalidParams
      })
    }
    await expect(client.readResource({ uri: `cairn://workspaces/${channel}/notes/missing.md` })).rejects.toMatchObject({ code: -32002 })
    await expect(client.readResource({ uri: "file:///etc/passwd" })).rejects.toMatchObject({ code: ErrorCode.InvalidParams })

    const noScope = await withScopes("chat")
    await expect(noScope.readResource({ uri: `cairn://workspaces/${channel}/notes/plan.md` })).rejects.toThrow(
      /Missing required scope: workspaces.files:read/
    )
  })

  it("holds chat_with_bot to RATE_LIMIT_CHAT like /chat; other MCP requests only to the default limit", async () => {
    const settings = (values: Record<string, unknown>) =>
      server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
    const client = await withScopes("chat")
    expect((await settings({ RATE_LIMIT_ENABLED: true, RATE_LIMIT_DEFAULT: "100/minute", RATE_LIMIT_CHAT: "1/minute" })).status).toBe(200)
    try {
      llm.script({ text: "Once." })
      expect(textOf(await client.callTool({ name: "chat_with_bot", arguments: { message: "Hi" } }))[0]).toBe("Once.")
      const limited = await client.callTool({ name: "chat_with_bot", arguments: { message: "Again" } })
      expect(limited.isError).toBe(true)
      expect(textOf(limited)[0]).toMatch(/^Too many chat requests; retry in \d+ s$/)
      expect((await client.listTools()).tools).toHaveLength(1)
    } finally {
      expect((await settings({ RATE_LIMIT_ENABLED: false })).status).toBe(200)
    }
  })

  it("answers 401 without a key and with a bad one, with a JSON-RPC error body (see errors.test.ts)", async () => {
    await expect(connect(null)).rejects.toMatchObject({ code: 401 })
    await expect(connect("ask_not-a-real-key")).rejects.toMatchObject({ code: 401 })
    const raw = await server.request("/mcp", { method: "POST", body: "{}", auth: null })
    expect(raw.status).toBe(401)
    expect(raw.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata="/)
    expect((await json(raw)).error).toMatchObject({ code: -32001, message: expect.stringContaining("Not authenticated") })
  })

  it("answers GET and DELETE 405 with Allow: POST, and bad bodies with a 4xx", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await server.request("/mcp", { method })
      expect(response.status).toBe(405)
      expect(response.headers.get("allow")).toBe("POST")
    }
    const headers = { accept: "application/json, text/event-stream", "content-type": "application/json" }
    const badJson = await server.request("/mcp", { method: "POST", headers, body: "{not json" })
    expect(badJson.status).toBe(400)
    expect((await json(badJson)).error.code).toBe(ErrorCode.ParseError)
    const tooLarge = await server.request("/mcp", {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "x", id: 1, params: { pad: "x".repeat(5 * 1024 * 1024) } })
    })
    expect(tooLarge.status).toBe(413)
    const notAccepting = await server.request("/mcp", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(notAccepting.status).toBe(406)
  })

  it("is in the discovery listing for any key", async () => {
    const key = await createKey(server, ["chat"])
    const entries = await server.as(key.key).call((client) => client.discover.discover({ urlParams: {} }))
    expect(entries).toEqual(expect.arrayContaining([expect.objectContaining({ method: "POST", path: "/mcp", scope: "authenticated" })]))
  })
})
