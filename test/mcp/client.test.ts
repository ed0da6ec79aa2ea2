/**
 * Cairn as an MCP client end to end: the fixture MCP server over stdio (from MCP_SERVERS_FILE) and
 * over streamable HTTP (from the API), its tools called by a bot through /chat and /chat/stream
 * against the fake LLM, approvals, results, a changed tool list, timeouts, and a server killed
 * mid-call. Connections are per process and the database plays no part in them, so this runs on
 * PGlite only (the admin API's storage runs on both in servers.test.ts).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { CreateBot } from "../../src/bots/Model.ts"
import { CreateCarapace } from "../../src/carapaces/Model.ts"
import { ChatRequest } from "../../src/chat/Model.ts"
import { McpServerConflict } from "../../src/mcp/Errors.ts"
import { CreateMcpServer, UpdateMcpServer } from "../../src/mcp/Model.ts"
import { wireToolName } from "../../src/providers/ToolNames.ts"
import { eventually } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type McpHttpServer, startMcpHttpServer, stdioCommand } from "../fixtures/mcpServer.ts"
import { withDefaults } from "../support/client.ts"
import { tempDir } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { scaled, until } from "../support/time.ts"

const TOKEN = "file-token-value-0000ABCD"
const HEADER_TOKEN = "http-bearer-value-1111WXYZ"

const chatRequest = withDefaults(ChatRequest)
const botRequest = withDefaults(CreateBot)
const createRequest = withDefaults(CreateMcpServer)

describe("Cairn as an MCP client (pglite)", () => {
  let llm: FakeLlm
  let web: McpHttpServer
  let server: TestServer
  let clients = 0
  const client = () => `mcp-client-${++clients}`

  const view = (name: string) => server.call((c) => c.mcpServers.get({ path: { name } }))
  const execute = (name: string, args: Record<string, unknown> = {}) =>
    server.call((c) =>
      c.integrations.execute({ path: { name: encodeURIComponent(name) }, payload: { arguments: args, bot_id: "default" } })
    )
  const stream = async (body: Record<string, unknown>) => {
    const controller = new AbortController()
    const response = await server.request("/chat/stream", { method: "POST", body: JSON.stringify(body), signal: controller.signal })
    expect(response.status).toBe(200)
    return readSse(response, controller)
  }
  const call = (name: string, args: Record<string, unknown>) => ({
    toolCalls: [{ name: wireToolName(name), arguments: JSON.stringify(args) }]
  })

  beforeAll(async () => {
    llm = await startFakeLlm()
    web = await startMcpHttpServer({ token: HEADER_TOKEN })
    const file = path.join(tempDir("cairn-mcp-"), "mcp.yaml")
    fs.writeFileSync(
      file,
      [
        "servers:",
        "  - name: files",
        "    transport: stdio",
        `    command: ${JSON.stringify(stdioCommand.command)}`,
        `    args: ${JSON.stringify(stdioCommand.args)}`,
        "    env:",
        "      FIXTURE_TOKEN: ${MCP_TEST_TOKEN}",
        "  - name: broken",
        "    transport: stdio",
        "    url: http://127.0.0.1:1/mcp",
        ""
      ].join("\n")
    )
    server = await startServer({
      backend: "pglite",
      env: {
        ...fakeLlmEnv(llm),
        LLM_MAX_RETRIES: "0",
        MCP_SERVERS_FILE: file,
        MCP_TEST_TOKEN: TOKEN
      }
    })
    await server.call((c) =>
      c.mcpServers.create({
        payload: createRequest({
          name: "web",
          transport: "http",
          url: web.url,
          headers: { Authorization: `Bearer ${HEADER_TOKEN}` },
          timeout_ms: 1500
        })
      })
    )
    // The file's stdio server connects in the background after startup (its child starts first).
    await until(() => view("files"), (files) => files.status === "connected", 30_000, "the file's stdio server connected")
    // A carapace gives the whole HTTP server to the bot that wears it.
    await server.call((c) =>
      c.carapaces.create({ payload: withDefaults(CreateCarapace)({ id: "web-tools", name: "Web tools", tools: ["@mcp:web"] }) })
    )
    for (
      const bot of [
        { id: "filer", name: "Filer", tools: ["mcp:files/echo", "mcp:files/slow"] },
        { id: "webber", name: "Webber", carapaces: ["web-tools"] },
        { id: "careful", name: "Careful", tools: ["mcp:files/echo"], tool_policies: { "mcp:files/echo": "require_approval" as const } }
      ]
    ) {
      await server.call((c) => c.bots.create({ payload: botRequest(bot) }))
    }
  })
  afterAll(async () => {
    await server?.close()
    await web?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  it("loads MCP_SERVERS_FILE at startup (${NAME} filled in, broken entries skipped); its servers are read-only over the API", async () => {
    const files = await view("files")
    expect(files).toMatchObject({ source: "file", status: "connected", env: { FIXTURE_TOKEN: "****ABCD" } })
    expect(await execute("mcp:files/env", { name: "FIXTURE_TOKEN" })).toMatchObject({ result: TOKEN })
    expect((await server.call((c) => c.mcpServers.list())).servers.map((s) => s.name)).toEqual(["files", "web"])

    const deleted = await server.failsWith(McpServerConflict, (c) => c.mcpServers.delete({ path: { name: "files" } }))
    expect(deleted.detail).toContain("MCP_SERVERS_FILE")
    const changed = await server.failsWith(
      McpServerConflict,
      (c) =>
        c.mcpServers.update({ path: { name: "files" }, payload: withDefaults(UpdateMcpServer)({ transport: "stdio", command: "true" }) })
    )
    expect(changed.detail).toContain("change it there")
    expect((await view("files")).pid).toBe(files.pid)
  })

  it("lets a bot call a stdio server's tool through /chat: the result reaches the session, under a name the provider takes", async () => {
    llm.script(call("mcp:files/echo", { text: "hello from cairn" }), { text: "It said hello" })
    const answer = await server.call((c) =>
      c.chat.chat({ payload: chatRequest({ message: "Echo something", bot_id: "filer", client_id: client() }) })
    )
    expect(answer.response).toBe("It said hello")
    const messages = await server.call((c) => c.sessions.messages({ path: { id: answer.session_id } }))
    expect(messages.find((m) => m.role === "tool")).toMatchObject({ content: "hello from cairn" })
    const [first, second] = llm.requestsTo("/v1/chat/completions")
    const offered = first!.body.tools.map((t: { function: { name: string } }) => t.function.name)
    expect(offered).toEqual([wireToolName("mcp:files/echo"), wireToolName("mcp:files/slow")])
    for (const name of offered) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    // The history carries the call under the same stand-in.
    expect(second!.body.messages.find((m: { role: string }) => m.role === "assistant").tool_calls[0].function.name).toBe(
      wireToolName("mcp:files/echo")
    )
    const tools = await server.call((c) => c.integrations.tools())
    expect(tools.filter((t) => t.source === "mcp:files").map((t) => t.name)).toEqual(
      expect.arrayContaining(["mcp:files/echo", "mcp:files/env"])
    )
  })

  it("lets a bot whose carapace names @mcp:web call an HTTP server's tool through /chat/stream, with the server's secret header", async () => {
    llm.script(call("mcp:web/add", { a: 2, b: 40 }), { text: "42" })
    const events = (await (await stream({ message: "Add", bot_id: "webber", client_id: client() })).rest()).map((e) => e.data)
    expect(events.find((e) => e.type === "tool_start")).toMatchObject({ name: "mcp:web/add", args: { a: 2, b: 40 } })
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ name: "mcp:web/add", result: "42", is_error: false })
    expect(events.at(-1)).toMatchObject({ type: "response", text: "42", tools_used: ["mcp:web/add"] })
    expect(web.requests.length).toBeGreaterThan(0)
    expect(web.requests.every((headers) => headers.authorization === `Bearer ${HEADER_TOKEN}`)).toBe(true)
    const offered = llm.requestsTo("/v1/chat/completions")[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)
    expect(offered).toContain(wireToolName("mcp:web/echo"))
  })

  it("asks for approval before an MCP tool when the bot's policy says so", async () => {
    llm.script(call("mcp:files/echo", { text: "guarded" }), { text: "Not run" })
    const sse = await stream({ message: "Echo", bot_id: "careful", client_id: client() })
    const ask = (await sse.until((e) => e.data.type === "approval_request")).at(-1)!.data
    expect(ask).toMatchObject({ tool_name: "mcp:files/echo", arguments: { text: "guarded" } })
    await server.call((c) => c.chat.decide({ path: { id: ask.approval_id }, payload: { approved: false } }))
    const rest = (await sse.rest()).map((e) => e.data)
    expect(rest.find((e) => e.type === "tool_result").result).toContain("did not approve")
    expect(rest.at(-1)).toMatchObject({ type: "response", text: "Not run" })
  })

  it("renders content parts, reports an isError result, applies the timeout, and follows a changed tool list", async () => {
    expect((await execute("mcp:files/mixed")).result).toBe(
      "a picture:\n[image image/png]\n[resource link file:///tmp/report.txt (report.txt)]"
    )
    expect(await execute("mcp:files/fail", { message: "no such file" })).toMatchObject({ is_error: true, error: "no such file" })
    // Ended by the server's timeout (its message says so), not by the tool's own 10 s.
    const slow = await execute("mcp:web/slow", { ms: 10_000 })
    expect(slow).toMatchObject({ is_error: true })
    expect(slow.error).toContain("timed out after 1500 ms")
    // Given up here, the call is cancelled at the server too.
    await eventually(async () => web.methods.includes("notifications/cancelled"), 20_000)

    expect((await view("files")).tools).not.toContain("mcp:files/extra")
    expect((await execute("mcp:files/grow")).result).toBe("grown")
    await eventually(async () => (await view("files")).tools.includes("mcp:files/extra"), 20_000)
    expect((await execute("mcp:files/extra")).result).toBe("extra!")
  })

  it(
    "fails a stdio call at once when its server is killed mid-call; the turn ends with response; the status says why; it reconnects",
    async () => {
      const before = await view("files")
      llm.script(call("mcp:files/slow", { ms: 20_000 }), { text: "The tool failed" })
      const sse = await stream({ message: "Be slow", bot_id: "filer", client_id: client() })
      await sse.until((e) => e.data.type === "tool_start")
      process.kill(before.pid!, "SIGKILL")
      // Failed by the lost connection (so said), not by the call's timeout or the tool's 20 s.
      const result = (await sse.until((e) => e.data.type === "tool_result")).at(-1)!.data
      expect(result).toMatchObject({ name: "mcp:files/slow", is_error: true })
      expect(result.error).toContain("MCP server \"files\" lost the connection during the call")
      // Read at once: the server is tried again after MCP_RECONNECT_BASE_MS (1 s).
      const down = await view("files")
      expect(["failed", "connecting"]).toContain(down.status)
      expect(down.error).toContain("the connection closed")
      expect((await sse.rest()).at(-1)!.data).toMatchObject({ type: "response", text: "The tool failed" })

      // A new stdio process to start: most of a minute on a busy machine.
      await eventually(async () => (await view("files")).status === "connected", 60_000)
      expect((await view("files")).pid).not.toBe(before.pid)
      expect((await execute("mcp:files/echo", { text: "back" })).result).toBe("back")
    },
    scaled(120_000)
  )

  it("fails an HTTP call at once when its server dies mid-call, and every call after at once with a clear error", async () => {
    await server.call((c) =>
      c.mcpServers.update({
        path: { name: "web" },
        payload: withDefaults(UpdateMcpServer)({
          transport: "http",
          url: web.url,
          headers: { Authorization: "****WXYZ" },
          timeout_ms: 20_000
        })
      })
    )
    llm.script(call("mcp:web/slow", { ms: 15_000 }), { text: "The server died" })
    const sse = await stream({ message: "Be slow", bot_id: "webber", client_id: client() })
    await sse.until((e) => e.data.type === "tool_start")
    await web.crash()
    // Failed by the lost connection (so said), not by the call's 20 s timeout or the tool's 15 s.
    const result = (await sse.until((e) => e.data.type === "tool_result")).at(-1)!.data
    expect(result).toMatchObject({ name: "mcp:web/slow", is_error: true })
    expect(result.error).toContain("MCP server \"web\" lost the connection during the call")
    expect((await sse.rest()).at(-1)!.data).toMatchObject({ type: "response", text: "The server died" })

    const down = await view("web")
    expect(["failed", "connecting"]).toContain(down.status)
    expect(down.error).toBeTruthy()
    expect(down.tools).toContain("mcp:web/echo")
    // Refused as not connected, not sent to wait on a dead server.
    const refused = await execute("mcp:web/echo", { text: "anyone?" })
    expect(refused.error).toMatch(/^MCP server "web" is not connected: /)
    expect(JSON.stringify(await server.call((c) => c.mcpServers.list()))).not.toContain(HEADER_TOKEN)
  })
})
