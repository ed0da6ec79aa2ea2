/** The MCP client's pure parts: a tool result as text, and reading MCP_SERVERS_FILE. */
import { ConfigProvider, Effect, Either, Logger } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { renderResult } from "../../src/mcp/Content.ts"
import { readServersFile } from "../../src/mcp/File.ts"
import { tempDir } from "../support/database.ts"

describe("an MCP tool result as text", () => {
  it("joins text parts and summarises the others", () => {
    expect(
      renderResult({
        content: [
          { type: "text", text: "first" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "resource", resource: { uri: "file:///a.txt", text: "inline text" } },
          { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA", mimeType: "application/octet-stream" } },
          { type: "resource_link", uri: "https://example.com/r", name: "r" },
          { type: "text", text: "" },
          { type: "something_new" }
        ]
      })
    ).toBe(
      "first\n[image image/png]\n[audio audio/wav]\ninline text\n[resource file:///b.bin application/octet-stream]\n[resource link https://example.com/r (r)]\n[something_new]"
    )
  })

  it("falls back to the structured content, then the first protocol version's toolResult", () => {
    expect(renderResult({ content: [], structuredContent: { temperature: 21 } })).toBe("{\"temperature\":21}")
    expect(renderResult({ toolResult: { ok: true } })).toBe("{\"ok\":true}")
    expect(renderResult({ toolResult: "plain" })).toBe("plain")
    expect(renderResult({})).toBe("")
  })
})

describe("MCP_SERVERS_FILE", () => {
  const read = async (yaml: string, env: Record<string, string> = {}) => {
    const file = path.join(tempDir("cairn-mcp-file-"), "servers.yaml")
    fs.writeFileSync(file, yaml)
    const logs: Array<string> = []
    const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
    const result = await Effect.runPromise(
      readServersFile(file).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.provide(logger))
    )
    return { result, logs: logs.join("\n") }
  }

  it("fills ${NAME} from the environment and skips, by name, each entry that is wrong", async () => {
    const { result, logs } = await read(
      `
servers:
  - name: search
    transport: http
    url: \${SEARCH_URL}/mcp
    headers: { Authorization: "Bearer \${SEARCH_TOKEN}" }
    timeout_ms: 5000
  - name: files
    transport: stdio
    command: npx
    args: [-y, some-server]
    env: { API_KEY: "\${MISSING_KEY}" }
  - name: Bad Name
    transport: stdio
    command: x
    env: { TOKEN: 1234567890 }
  - name: search
    transport: http
    url: http://127.0.0.1/other
`,
      { SEARCH_URL: "https://mcp.example.com", SEARCH_TOKEN: "tok-secret-9999" }
    )
    expect(Either.getOrThrow(result)).toEqual([
      {
        name: "search",
        transport: "http",
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer tok-secret-9999" },
        args: [],
        env: {},
        enabled: true,
        timeout_ms: 5000
      }
    ])
    expect(logs).toContain("MCP server files in")
    expect(logs).toContain("${MISSING_KEY} not set")
    expect(logs).toContain("MCP server Bad Name in")
    expect(logs).toContain("name: Expected 1-63 characters")
    expect(logs).toContain("the file names it twice")
    // The problems are named, never the values.
    expect(logs).not.toContain("1234567890")
    expect(logs).not.toContain("tok-secret")
  })

  it("answers why a file cannot be used at all", async () => {
    expect(Either.isLeft((await read("servers: [unclosed")).result)).toBe(true)
    expect(Either.getLeft((await read("servers: 12")).result)).toEqual(expect.objectContaining({ _tag: "Some" }))
    expect(Either.getOrThrow((await read("")).result)).toEqual([])
    const missing = await Effect.runPromise(readServersFile(path.join(tempDir(), "absent.yaml")))
    expect(Either.isLeft(missing)).toBe(true)
  })
})
