/**
 * The admin API of MCP servers, on both databases, against the fixture server over stdio: sealed
 * and masked secrets, the masked value kept on update, 422, 404, 409, scopes, and a server's
 * tools and child process coming and going with it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ToolRegistry } from "../../src/agent/Tools.ts"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { Forbidden, NotFound, ValidationError } from "../../src/contract/Errors.ts"
import { McpServerConflict } from "../../src/mcp/Errors.ts"
import { syncServersFile } from "../../src/mcp/File.ts"
import { CreateMcpServer, type McpServerView, UpdateMcpServer } from "../../src/mcp/Model.ts"
import { McpServersRepo } from "../../src/mcp/Repo.ts"
import * as ServerSecret from "../../src/secrets/ServerSecret.ts"
import { createKey, eventually } from "../auth/helpers.ts"
import { stdioCommand } from "../fixtures/mcpServer.ts"
import { withDefaults } from "../support/client.ts"
import { backends, createTestDatabase, tempDir, type TestDatabase, withDatabase } from "../support/database.ts"
import { alive, json, startServer, type TestServer } from "../support/server.ts"

const SECRET = "stdio-secret-value-ABCD1234"
const createRequest = withDefaults(CreateMcpServer)
const updateRequest = withDefaults(UpdateMcpServer)

/** A read sent back as a replacement (masked values and all), with changes. */
const settingsOf = (view: McpServerView, changes: Partial<typeof UpdateMcpServer.Encoded> = {}) =>
  updateRequest({
    transport: view.transport,
    ...(view.command !== null ? { command: view.command } : {}),
    args: view.args,
    env: view.env,
    ...(view.url !== null ? { url: view.url } : {}),
    headers: view.headers,
    enabled: view.enabled,
    timeout_ms: view.timeout_ms,
    ...changes
  })

describe.each(backends)("MCP servers admin API (%s)", (backend) => {
  let db: TestDatabase
  let server: TestServer

  const toolNames = () => server.run(Effect.map(ToolRegistry, (tools) => tools.list().map((tool) => tool.schema.function.name)))
  // The typed client puts path parameters in as given: a tool name's "/" must be encoded.
  const execute = (name: string, args: Record<string, unknown>) =>
    server.call((client) =>
      client.integrations.execute({ path: { name: encodeURIComponent(name) }, payload: { arguments: args, bot_id: "default" } })
    )

  beforeAll(async () => {
    db = await createTestDatabase(backend, { migrated: true })
    server = await startServer({ backend, db })
  })
  afterAll(async () => {
    await server?.close().catch(() => {})
    await db?.drop()
  })

  it("creates a stdio server: secrets sealed at rest, masked in every answer, its tools registered", async () => {
    const created = await server.call((client) =>
      client.mcpServers.create({
        payload: createRequest({ name: "files", transport: "stdio", ...stdioCommand, env: { FIXTURE_TOKEN: SECRET, SHORT: "abc" } })
      })
    )
    expect(created).toMatchObject({
      name: "files",
      transport: "stdio",
      command: process.execPath,
      env: { FIXTURE_TOKEN: "****1234", SHORT: "****" },
      url: null,
      headers: {},
      enabled: true,
      timeout_ms: 30000,
      source: "api",
      status: "connected",
      error: null
    })
    expect(created.tools).toEqual(expect.arrayContaining(["mcp:files/echo", "mcp:files/slow", "mcp:files/fail", "mcp:files/env"]))
    expect(created.last_connected_at).toBeInstanceOf(Date)
    expect(alive(created.pid!)).toBe(true)

    // The child gets the value in clear; no answer ever carries it.
    expect(await execute("mcp:files/env", { name: "FIXTURE_TOKEN" })).toMatchObject({ result: SECRET, is_error: false })
    for (const path of ["/api/v1/admin/mcp-servers", "/api/v1/admin/mcp-servers/files"]) {
      const text = await (await server.request(path)).text()
      expect(text).toContain("****1234")
      expect(text).not.toContain(SECRET)
    }
    expect(await toolNames()).toEqual(expect.arrayContaining(["mcp:files/echo", "mcp:files/add"]))
    const listed = await server.call((client) => client.integrations.tools())
    expect(listed.find((tool) => tool.name === "mcp:files/echo")).toMatchObject({
      source: "mcp:files",
      source_integration: null,
      description: "Answers its text",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
    })
  })

  it("keeps a secret sent back masked, replaces one sent in clear, and refuses a mask with nothing behind it", async () => {
    const current = await server.call((client) => client.mcpServers.get({ path: { name: "files" } }))
    const kept = await server.call((client) =>
      client.mcpServers.update({ path: { name: "files" }, payload: settingsOf(current, { timeout_ms: 5000 }) })
    )
    expect(kept).toMatchObject({ env: { FIXTURE_TOKEN: "****1234", SHORT: "****" }, timeout_ms: 5000, status: "connected" })
    expect(kept.pid).not.toBe(current.pid)
    expect(await execute("mcp:files/env", { name: "FIXTURE_TOKEN" })).toMatchObject({ result: SECRET })
    expect(await execute("mcp:files/env", { name: "SHORT" })).toMatchObject({ result: "abc" })
    expect(await server.run(Effect.map(ToolRegistry, (tools) => tools.get("mcp:files/echo")?.timeoutMs))).toBe(5000)

    const refused = await server.failsWith(ValidationError, (client) =>
      client.mcpServers.update({
        path: { name: "files" },
        payload: updateRequest({ transport: "stdio", ...stdioCommand, env: { FIXTURE_TOKEN: "****1234", OTHER: "****wxyz" } })
      }))
    expect(refused.detail.map((issue) => issue.loc)).toEqual([["body", "env", "OTHER"]])

    const rotated = await server.call((client) =>
      client.mcpServers.update({
        path: { name: "files" },
        payload: updateRequest({ transport: "stdio", ...stdioCommand, env: { FIXTURE_TOKEN: "rotated-secret-value-9876" } })
      })
    )
    expect(rotated.env).toEqual({ FIXTURE_TOKEN: "****9876" })
    expect(await execute("mcp:files/env", { name: "FIXTURE_TOKEN" })).toMatchObject({ result: "rotated-secret-value-9876" })
  })

  it("answers bad input with 422 in the spec's shape, never a 5xx", async () => {
    const post = (body: unknown) => server.request("/api/v1/admin/mcp-servers", { method: "POST", body: JSON.stringify(body) })
    const bad = await post({ name: "Bad Name!", transport: "stdio", command: "x", timeout_ms: 10 })
    expect(bad.status).toBe(422)
    expect((await json(bad)).detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([
      ["body", "name"],
      ["body", "timeout_ms"]
    ])
    const mixed = await post({ name: "mixed", transport: "stdio", url: "http://127.0.0.1:1/mcp", headers: { A: "b" } })
    expect(mixed.status).toBe(422)
    expect(await json(mixed)).toEqual({
      detail: [
        { loc: ["body", "command"], msg: "A stdio server needs the command that starts it", type: expect.any(String) },
        { loc: ["body", "url"], msg: "url is for transport http", type: expect.any(String) },
        { loc: ["body", "headers"], msg: "headers are for transport http", type: expect.any(String) }
      ]
    })
    const http = await post({
      name: "web",
      transport: "http",
      url: "http://user:pw@127.0.0.1/mcp",
      env: { "BAD-NAME": "1" },
      headers: { "X Bad": "1", Good: "a\r\nInjected: 1" }
    })
    expect(http.status).toBe(422)
    expect((await json(http)).detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([
      ["body", "env", "BAD-NAME"],
      ["body", "url"],
      ["body", "headers", "X Bad"]
    ])
    const injected = await post({ name: "web", transport: "http", url: "http://127.0.0.1/mcp", headers: { Good: "a\r\nInjected: 1" } })
    expect((await json(injected)).detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([["body", "headers", "Good"]])
    expect((await post({ transport: "ftp" })).status).toBe(422)
    expect((await post("not an object")).status).toBe(422)
  })

  it("answers 404 for an unknown name and 409 for a taken one", async () => {
    for (const name of ["nope", "Not A Name"]) {
      await server.failsWith(NotFound, (client) => client.mcpServers.get({ path: { name } }))
      await server.failsWith(NotFound, (client) => client.mcpServers.delete({ path: { name } }))
      await server.failsWith(NotFound, (client) => client.mcpServers.reconnect({ path: { name } }))
      await server.failsWith(
        NotFound,
        (client) =>
          client.mcpServers.update({ path: { name }, payload: updateRequest({ transport: "http", url: "http://127.0.0.1:1/mcp" }) })
      )
    }
    const taken = await server.failsWith(
      McpServerConflict,
      (client) => client.mcpServers.create({ payload: createRequest({ name: "files", transport: "http", url: "http://127.0.0.1:1/mcp" }) })
    )
    expect(taken.detail).toContain("files")
  })

  it("asks tools:read to read, admin to change, settings:write to reconnect", async () => {
    const reader = await createKey(server, ["tools:read"])
    const operator = await createKey(server, ["settings:write"])
    expect((await server.as(reader.key).call((client) => client.mcpServers.list())).servers.map((s) => s.name)).toContain("files")
    await server.as(reader.key).failsWith(Forbidden, (client) => client.mcpServers.reconnect({ path: { name: "files" } }))
    await server.as(operator.key).failsWith(Forbidden, (client) => client.mcpServers.list())
    await server.as(operator.key).failsWith(
      Forbidden,
      (client) => client.mcpServers.create({ payload: createRequest({ name: "other", transport: "http", url: "http://127.0.0.1:1/mcp" }) })
    )
    await server.as(operator.key).failsWith(Forbidden, (client) => client.mcpServers.delete({ path: { name: "files" } }))
    const before = await server.call((client) => client.mcpServers.get({ path: { name: "files" } }))
    const again = await server.as(operator.key).call((client) => client.mcpServers.reconnect({ path: { name: "files" } }))
    expect(again).toMatchObject({ status: "connected", error: null })
    expect(again.pid).not.toBe(before.pid)
    await eventually(async () => !alive(before.pid!), 10_000)
  })

  it("disables, enables and deletes: tools and the child process go with the server", async () => {
    const before = await server.call((client) => client.mcpServers.get({ path: { name: "files" } }))
    const disabled = await server.call((client) =>
      client.mcpServers.update({ path: { name: "files" }, payload: settingsOf(before, { enabled: false }) })
    )
    expect(disabled).toMatchObject({ status: "disabled", tools: [], pid: null, error: null })
    expect((await toolNames()).filter((name) => name.startsWith("mcp:files/"))).toEqual([])
    await eventually(async () => !alive(before.pid!), 10_000)
    await server.failsWith(McpServerConflict, (client) => client.mcpServers.reconnect({ path: { name: "files" } }))

    const enabled = await server.call((client) =>
      client.mcpServers.update({ path: { name: "files" }, payload: settingsOf(before, { enabled: true }) })
    )
    expect(enabled.status).toBe("connected")
    expect(await toolNames()).toContain("mcp:files/echo")

    const removed = await server.request("/api/v1/admin/mcp-servers/files", { method: "DELETE" })
    expect(removed.status).toBe(204)
    expect((await toolNames()).filter((name) => name.startsWith("mcp:files/"))).toEqual([])
    await eventually(async () => !alive(enabled.pid!), 10_000)
    await server.failsWith(NotFound, (client) => client.mcpServers.get({ path: { name: "files" } }))
  })

  it("shows a server that cannot start as failed with the reason, and stores every secret sealed", async () => {
    const broken = await server.call((client) =>
      client.mcpServers.create({
        payload: createRequest({
          name: "broken",
          transport: "stdio",
          command: "/nonexistent/mcp-server",
          env: { BROKEN_TOKEN: "broken-secret-value-5555" }
        })
      })
    )
    expect(broken).toMatchObject({ status: "failed", tools: [], pid: null, last_connected_at: null })
    expect(broken.error).toContain("ENOENT")
    const web = await server.call((client) =>
      client.mcpServers.create({
        payload: createRequest({
          name: "web",
          transport: "http",
          url: "http://127.0.0.1:9/mcp",
          headers: { Authorization: "Bearer header-secret-value-7777", "X-Team": "blue" }
        })
      })
    )
    expect(web).toMatchObject({ status: "failed", headers: { Authorization: "****7777", "X-Team": "****" } })
    expect(web.error).toMatch(/could not connect/)
    expect(JSON.stringify(web)).not.toContain("header-secret-value")

    // At rest, read from the database itself once the server is down.
    await server.close()
    const rows = await withDatabase(
      db,
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<
            { name: string; env: string; headers: string }
          >`SELECT name, env_sealed::text AS env, headers_sealed::text AS headers FROM mcp_servers ORDER BY name`
      )
    )
    expect(rows.map((row) => row.name)).toEqual(["broken", "web"])
    const stored = rows.map((row) => row.env + row.headers).join(" ")
    for (const secret of ["broken-secret-value-5555", "header-secret-value-7777", "blue"]) expect(stored).not.toContain(secret)
    expect(JSON.parse(rows[1]!.headers).Authorization).toMatch(/^v1:/)
  })

  it("syncs MCP_SERVERS_FILE into the table: new and changed servers written, unchanged ones left, names of the API kept, the rest removed", async () => {
    const file = path.join(tempDir("cairn-mcp-sync-"), "servers.yaml")
    const write = (content: string | Array<Record<string, unknown>>) =>
      Effect.sync(() => fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify({ servers: content })))
    // One connection to the database for every step (PGlite opens slowly).
    const steps = await withDatabase(
      db,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sync = (configured: string | null) =>
          Effect.zipRight(
            syncServersFile(configured === null ? Option.none() : Option.some(configured)),
            sql<
              { name: string; source: string; url: string | null; updated_at: Date }
            >`SELECT name, source, url, updated_at FROM mcp_servers ORDER BY name`
          )
        yield* write([
          { name: "web", transport: "http", url: "http://127.0.0.1:8/elsewhere" },
          { name: "filed", transport: "http", url: "http://127.0.0.1:7/mcp", headers: { Authorization: "Bearer filed-secret-value" } }
        ])
        const first = yield* sync(file)
        const again = yield* sync(file)
        yield* write("servers: [unclosed")
        const unreadable = yield* sync(file)
        yield* write([])
        const emptied = yield* sync(file)
        yield* write([{ name: "filed", transport: "http", url: "http://127.0.0.1:7/mcp" }])
        const refilled = yield* sync(file)
        const unset = yield* sync(null)
        return { first, again, unreadable, emptied, refilled, unset }
      }).pipe(Effect.provide(Layer.mergeAll(McpServersRepo.Default, ServerSecret.layer).pipe(Layer.provide(AppConfig.layer))))
    )
    const names = (rows: ReadonlyArray<{ name: string }>) => rows.map((row) => row.name)
    expect(steps.first.map((row) => [row.name, row.source, row.url])).toEqual([
      ["broken", "api", null],
      ["filed", "file", "http://127.0.0.1:7/mcp"],
      ["web", "api", "http://127.0.0.1:9/mcp"]
    ])
    expect(steps.again.find((row) => row.name === "filed")!.updated_at).toEqual(steps.first.find((row) => row.name === "filed")!.updated_at)
    expect(names(steps.unreadable)).toEqual(["broken", "filed", "web"])
    expect(names(steps.emptied)).toEqual(["broken", "web"])
    expect(names(steps.refilled)).toEqual(["broken", "filed", "web"])
    expect(names(steps.unset)).toEqual(["broken", "web"])
  })
})
