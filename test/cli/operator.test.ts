/**
 * The operator commands of `cairn`, against a real Cairn: `login` saves a checked key for the
 * others, `keys`, `bots apply` from YAML (create, then update; `bots show` gives YAML it takes
 * back), `docs ingest` of 100 files with its progress bar in a terminal, `docs search`, `tasks`,
 * `backup` with its progress and `restore` of that archive, `status`; `--json` parses everywhere,
 * and the exit codes are 0, 1 (a failure, said in one line) and 2 (a usage error).
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWithFakeLlm, stopWithFakeLlm } from "../compat/harness.ts"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, tempDir } from "../support/database.ts"
import { runCli, type TestServer } from "../support/server.ts"
import { startPty } from "../support/terminal.ts"
import { processStartMs, scaled } from "../support/time.ts"

// A test runs up to seven `cairn` commands in turn, each a process start with its deadline.
describe("cairn's operator commands", { timeout: 7 * processStartMs + scaled(60_000) }, () => {
  let server: TestServer
  let llm: FakeLlm
  let home: string
  /** A command with this server and the static key, and no config file but the test's own. */
  const cairn = (...args: Array<string>) => runCli([...args, "--url", server.baseUrl, "--key", server.apiKey], { XDG_CONFIG_HOME: home })
  const json = async (...args: Array<string>) => {
    const result = await cairn(...args, "--json")
    expect(result.code, result.output).toBe(0)
    return JSON.parse(result.stdout)
  }

  beforeAll(async () => {
    ;({ llm, server } = await startWithFakeLlm("pglite", "Done."))
    home = tempDir("cairn-cli-home-")
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })

  it("login checks the key, saves it readable by its owner only, and the other commands use it", async () => {
    const refused = await runCli(["login", "--url", server.baseUrl, "--key", "not-a-key"], { XDG_CONFIG_HOME: home })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^cairn: Unauthorized/m)
    expect(fs.existsSync(path.join(home, "cairn", "config.json"))).toBe(false)

    const login = await runCli(["login", "--url", server.baseUrl, "--key", server.apiKey], { XDG_CONFIG_HOME: home })
    expect(login.code, login.output).toBe(0)
    const file = path.join(home, "cairn", "config.json")
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ url: server.baseUrl, key: server.apiKey })

    const status = await runCli(["status", "--json"], { XDG_CONFIG_HOME: home })
    expect(status.code, status.output).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({
      url: server.baseUrl,
      health: "ok",
      server_version: "0.1.0",
      credentials: { kind: "static_key" }
    })
    expect(JSON.parse(status.stdout).integrations.map((i: { id: string }) => i.id)).toContain("example")
    expect(JSON.parse(status.stdout).mcp_servers).toEqual([])
  })

  it("creates keys by preset or scopes, lists them without their values, and revokes one", async () => {
    const created = await json("keys", "create", "--preset", "read_only_monitor", "--scopes", "documents:read", "--name", "monitor")
    expect(created.scopes).toEqual(expect.arrayContaining(["logs:read", "documents:read"]))
    const listed = await json("keys", "list")
    const entry = listed.find((key: { id: string }) => key.id === created.id)
    expect(entry).toMatchObject({ name: "monitor", status: "active" })
    expect(JSON.stringify(listed)).not.toContain(created.key)
    expect((await json("keys", "revoke", created.id)).status).toBe("revoked")

    const unknown = await cairn("keys", "create", "--preset", "Space Station")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("no preset Space Station (there are: Messaging Integration, Chat Client")
    const empty = await cairn("keys", "create")
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain("give --preset or --scopes")
  })

  it("applies a bot from YAML (create, then update), and `bots show` prints YAML that applies back", async () => {
    const file = path.join(home, "writer.yaml")
    fs.writeFileSync(file, "id: writer\nname: Writer\nsystem_prompt: You write.\ntools:\n  - current_time\n")
    const first = await cairn("bots", "apply", file)
    expect(first.code, first.output).toBe(0)
    expect(first.stdout).toContain("Created the bot writer (Writer)")
    fs.writeFileSync(file, "id: writer\nname: Writer Two\nmax_iterations: 3\n")
    expect((await cairn("bots", "apply", file)).stdout).toContain("Updated the bot writer (Writer Two)")
    expect(await json("bots", "show", "writer")).toMatchObject({
      name: "Writer Two",
      max_iterations: 3,
      system_prompt: "You write.",
      tools: ["current_time"]
    })

    const shown = await cairn("bots", "show", "writer")
    expect(shown.stdout).toMatch(/^id: writer$/m)
    fs.writeFileSync(file, shown.stdout)
    const again = await cairn("bots", "apply", file)
    expect(again.code, again.output).toBe(0)
    expect((await json("bots", "list")).map((bot: { id: string }) => bot.id)).toEqual(expect.arrayContaining(["default", "writer"]))

    fs.writeFileSync(file, "id: broken\nname: Broken\nmax_iterations: 500\n")
    const invalid = await cairn("bots", "apply", file)
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toMatch(/max_iterations/)
  })

  it("ingests 100 files with a progress bar in a terminal, and stores 100 documents that search finds", async () => {
    const folder = tempDir("cairn-ingest-")
    for (let i = 0; i < 100; i++) {
      fs.mkdirSync(path.join(folder, `part-${i % 4}`), { recursive: true })
      fs.writeFileSync(
        path.join(folder, `part-${i % 4}`, `note-${i}.md`),
        `# Note ${i}\n\nThe harbour pilot number ${i} guides ships past the reef.\n`
      )
    }
    fs.writeFileSync(path.join(folder, ".hidden.md"), "never ingested")
    const pty = startPty(["docs", "ingest", folder, "--url", server.baseUrl, "--key", server.apiKey], { XDG_CONFIG_HOME: home })
    try {
      const screen = await pty.waitFor("Stored 100 of 100 files as documents", 60_000)
      expect(screen).toMatch(/ingest \[#{10,}\] 100% 100\/100 [\d.]+ files\/s in \d+s/)
      expect(await pty.waitForExit()).toBe(0)
    } finally {
      pty.close()
    }
    // Every note says "harbour": a search of up to 100 finds 100 distinct documents, and no more exist.
    const found = await json("docs", "search", "harbour", "pilot", "--limit", "100", "--integration", "cli")
    expect(new Set(found.map((document: { id: string }) => document.id)).size).toBe(100)
    expect(new Set(found.map((document: { title: string }) => document.title))).toContain(path.join("part-1", "note-5.md"))
    expect(found[0].metadata).toMatchObject({ ingested_by: "cairn docs ingest" })
    expect(JSON.stringify(found)).not.toContain("never ingested")
  })

  it("lists, shows and cancels tasks", async () => {
    llm.script({ hang: true })
    const sessionId = randomUUID()
    const busy = fetch(`${server.baseUrl}/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "hold on", session_id: sessionId })
    })
    await new Promise((resolve) => setTimeout(resolve, 500))
    const injected = await server.call((client) =>
      client.injection.inject({ path: { id: sessionId }, payload: { content: "later", run_agent: true, source: "api", notify: false } })
    )
    const listed = await json("tasks", "list", "--session", sessionId)
    expect(listed.map((task: { id: string }) => task.id)).toContain(injected.task_id)
    const shown = await cairn("tasks", "show", injected.task_id!)
    expect(shown.stdout).toMatch(/status\s+pending/)
    expect((await json("tasks", "cancel", injected.task_id!)).status).toBe("cancelled")
    await server.call((client) => client.chat.cancel({ payload: { client_id: "default", session_id: sessionId } }))
    await busy
    const again = await cairn("tasks", "cancel", injected.task_id!)
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^cairn: .*409|cairn: .*(cancelled|not pending)/m)
  })

  it("backs up with progress, downloads the archive, and restores it into an empty data directory", async () => {
    const archive = path.join(tempDir("cairn-backup-"), "cairn.tar.gz")
    const pty = startPty(["backup", "-o", archive, "--url", server.baseUrl, "--key", server.apiKey], { XDG_CONFIG_HOME: home })
    try {
      const screen = await pty.waitFor(/Saved .*cairn\.tar\.gz/, 60_000)
      expect(screen).toMatch(/backup {2}\[#+\] 100% \d+\/\d+ [\d.]+ tables\/s/)
      expect(screen).toMatch(/download \[#+\] 100% [\d.]+ [KM]?B\/[\d.]+ [KM]?B/)
    } finally {
      pty.close()
    }
    expect(fs.readFileSync(archive).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]))

    const target = await createTestDatabase("pglite")
    try {
      const restored = await runCli(["restore", archive], { DATA_DIR: target.dataDir, LOG_LEVEL: "info" })
      expect(restored.code, restored.output).toBe(0)
      expect(restored.stderr).toMatch(/restore \[#+\] 100% \d+\/\d+ [\d.]+ rows\/s/)
      expect(restored.output).toContain("Restored")
    } finally {
      await target.drop()
    }
  }, scaled(120_000))

  it("logs replays the kept lines since a time, then follows new ones, filtered, until Ctrl+C", async () => {
    const setLevel = (level: "info" | "debug" | "warning") => server.call((client) => client.logs.setLevel({ payload: { level } }))
    // Written before the command starts: only --since brings it.
    await setLevel("info")
    const pty = startPty(["logs", "--since", "1h", "-q", "LOG LEVEL SET", "--url", server.baseUrl, "--key", server.apiKey], {
      XDG_CONFIG_HOME: home
    })
    try {
      await pty.started(/\d\d:\d\d:\d\d\.\d{3} INFO +Log level set to info at runtime/)
      // Written while it follows, and a line the query leaves out (the request log) is not shown.
      await setLevel("debug")
      const screen = await pty.waitFor("Log level set to debug at runtime")
      expect(screen).not.toMatch(/ request /)
      pty.press("C-c")
      expect(await pty.waitForExit()).toBe(0)
    } finally {
      pty.close()
      await setLevel("warning")
    }
    const reader = await server.call((client) => client.apiKeys.create({ payload: { name: "no logs", scopes: ["chat"] } }))
    const refused = await runCli(["logs", "--url", server.baseUrl, "--key", reader.key], { XDG_CONFIG_HOME: home })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^cairn: .*logs:read/m)
    const badSince = await cairn("logs", "--since", "yesterday-ish")
    expect(badSince.code).toBe(1)
    expect(badSince.stderr).toMatch(/^cairn: --since takes an age/m)
  })

  it("answers a usage error with 2 and an unreachable server with 1", async () => {
    expect((await runCli(["bogus"])).code).toBe(2)
    expect((await runCli(["tasks", "show"])).code).toBe(2)
    const down = await runCli(["status", "--url", "http://127.0.0.1:9", "--key", "x"], { XDG_CONFIG_HOME: home })
    expect(down.code).toBe(1)
    expect(down.stdout).toContain("cannot reach")
    expect(down.stderr).toMatch(/^cairn: the server is not healthy/m)
  })
})
