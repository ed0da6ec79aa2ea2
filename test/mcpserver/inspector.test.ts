/**
 * Cairn's MCP server through the MCP Inspector's CLI (`inspector --cli`, the devDependency
 * @modelcontextprotocol/inspector), as a person checking a server would run it: tools/list and a
 * tools/call with a key in `--header`, and a wrong key answered with Cairn's readable message.
 * The CLI runs as a child process (the server answers in this process meanwhile), with HOME in a
 * temporary folder for the catalogue and token store it keeps there.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

const inspectorBin = path.resolve("node_modules/.bin/inspector")

interface Outcome {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

describe.each(backends)("MCP server through the MCP Inspector's CLI (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let home: string

  /** One `inspector --cli` run against /mcp with this bearer token and further arguments. */
  const inspector = (token: string, ...args: ReadonlyArray<string>) =>
    new Promise<Outcome>((resolve) => {
      execFile(
        process.execPath,
        [inspectorBin, "--cli", `${server.baseUrl}/mcp`, "--header", `Authorization: Bearer ${token}`, ...args],
        { env: { ...process.env, HOME: home, NO_COLOR: "1" }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
      )
    })

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-inspector-"))
    llm = await startFakeLlm()
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "0" } })
  })
  afterEach(() => llm.reset())
  afterAll(async () => {
    await server?.close()
    await llm?.close()
    fs.rmSync(home, { recursive: true, force: true })
  })

  it("lists the tools a key's scopes grant", async () => {
    const key = await createKey(server, ["chat", "bots:read"])
    const listed = await inspector(key.key, "--method", "tools/list")
    expect(listed.code, listed.stderr).toBe(0)
    const { tools } = JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }
    expect(tools.map((tool) => tool.name).sort()).toEqual(["chat_with_bot", "list_bots"])
  })

  it("calls chat_with_bot and shows the bot's answer, and a bad argument as the tool's isError", async () => {
    const key = await createKey(server, ["chat"])
    llm.script({ text: "Hello from the inspector's bot." })
    const called = await inspector(key.key, "--method", "tools/call", "--tool-name", "chat_with_bot", "--tool-arg", "message=Hi")
    expect(called.code, called.stderr).toBe(0)
    const result = JSON.parse(called.stdout) as { content: Array<{ text: string }>; structuredContent: { response: string } }
    expect(result.structuredContent.response).toBe("Hello from the inspector's bot.")
    expect(result.content[0]!.text).toBe("Hello from the inspector's bot.")

    const misspelt = await inspector(key.key, "--method", "tools/call", "--tool-name", "chat_with_bot", "--tool-arg", "bot_id=default")
    expect(misspelt.code).not.toBe(0)
    expect(misspelt.stdout + misspelt.stderr).toContain("Invalid arguments for chat_with_bot")
  })

  it("shows a wrong key's 401 in Cairn's words (with --stored-auth-only, as in a script: no interactive OAuth)", async () => {
    const refused = await inspector("ask_not-a-real-key", "--stored-auth-only", "--method", "tools/list")
    expect(refused.code).not.toBe(0)
    expect(refused.stdout + refused.stderr).toContain("Invalid or expired credentials")
    expect(refused.stdout + refused.stderr).toContain("Authorization: Bearer <key>")
  })
})
