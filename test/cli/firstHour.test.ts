/**
 * `cairn` as a new operator meets it (issue 58), in a real terminal at 80 and 160 columns and
 * piped: help like gh's (one line per command and flag, wrapped at word boundaries, no colour codes
 * when piped or with NO_COLOR), the version; `login` with a username and password; list tables
 * that keep ids whole at 80 columns and ids taken by unique prefix; `status` exiting 1 when the key
 * is refused; `docs ingest` skipping empty and already stored files with exit 0; `docs search`
 * saying when nothing matches well; `bots apply` refusing an unknown tool. Runs the compiled dist/.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/database.ts"
import { runCli, startServer, type TestServer } from "../support/server.ts"
import { cairnBin, startPty } from "../support/terminal.ts"
import { scaled } from "../support/time.ts"

/** The help's lines: none past the width, and no word cut at a line's end (every word is one of the text's). */
const expectWrapped = (screen: string, width: number) => {
  const lines = screen.split("\n").filter((line) => !line.startsWith("[exited"))
  for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(width)
  return lines
}

describe("cairn for a new operator", () => {
  let server: TestServer
  let home: string
  const cairn = (...args: Array<string>) => runCli([...args, "--url", server.baseUrl, "--key", server.apiKey], { XDG_CONFIG_HOME: home })

  beforeAll(async () => {
    server = await startServer({ backend: "pglite" })
    home = tempDir("cairn-cli-home-")
  })
  afterAll(async () => {
    await server.close()
  })

  it.each([80, 160])("prints gh-like help wrapped at word boundaries at %i columns, one line per command and flag", async (width) => {
    const pty = startPty(["--help"], {}, { columns: width, rows: 60 })
    try {
      await pty.waitFor("LEARN MORE", 60_000)
      expect(await pty.waitForExit(60_000)).toBe(0)
      const screen = pty.screen()
      const lines = expectWrapped(screen, width)
      expect(screen).toMatch(/^USAGE\n {2}cairn <command> \[flags\]$/m)
      expect(screen).toMatch(/^ {2}status: {2,}The server's health/m)
      expect(screen).toMatch(/^ {2}\$ cairn login --url http:\/\/localhost:8000 --username admin$/m)
      // The restore line is long: wrapped under its own column, its words whole.
      const restore = lines.findIndex((line) => line.startsWith("  restore:"))
      const column = lines[restore]!.indexOf("Restore")
      const text = [lines[restore]!.slice(column)]
      for (let i = restore + 1; lines[i]!.startsWith(" ".repeat(column)) && lines[i]!.trim().length > 0; i++) text.push(lines[i]!.trim())
      expect(text.join(" ")).toContain(
        "Restore a backup archive (cairn backup, or POST /api/v1/admin/operations/backup) into an empty DATA_DIR"
      )
      expect(text.length).toBe(width === 80 ? 3 : 2)
    } finally {
      pty.close()
    }
  }, scaled(180_000))

  it("gives a command's flags one line each, with choices and defaults, and no colour codes when piped or with NO_COLOR", async () => {
    const piped = await runCli(["tasks", "list", "--help"], { NO_COLOR: "" })
    expect(piped.code).toBe(0)
    expect(piped.stdout).not.toContain("\u001b[")
    expect(piped.stdout).toMatch(
      /^ {2}--status <choice> +Only tasks in this state \(one of: pending, running,\n {22}complete, failed, cancelled\)$/m
    )
    expect(piped.stdout).toMatch(/^ {2}--limit <integer> +At most this many \(1-500\) \(default 50\)$/m)
    expect(piped.stdout).toMatch(/^ {2}\$ cairn tasks list --status pending$/m)
    for (const line of piped.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(80)

    const pty = startPty(["docs", "--help"], { NO_COLOR: "1" }, { columns: 80, rows: 40 })
    try {
      await pty.waitFor(/ingest: +Store files/, 60_000)
      expect(await pty.waitForExit(60_000)).toBe(0)
    } finally {
      pty.close()
    }

    const version = await runCli(["--version"])
    expect(version.stdout).toBe("cairn version 0.1.0\n")
    const unknown = await runCli(["bogus", "--help"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(`unknown command "bogus" for "cairn"`)
  }, scaled(180_000))

  it("logs in with a username and password, saving a key made for the CLI, and refuses a wrong password", async () => {
    await server.call((client) => client.users.create({ payload: { username: "ada", password: "correct horse 42", role: "admin" } }))
    const pty = startPty(["login", "--url", server.baseUrl, "--username", "ada"], { XDG_CONFIG_HOME: home }, { columns: 80, rows: 20 })
    try {
      await pty.waitFor("Password for ada", 60_000)
      pty.typeLine("correct horse 42")
      await pty.waitFor(/Logged in to .* with a scoped key/, 30_000)
      expect(await pty.waitForExit(60_000)).toBe(0)
    } finally {
      pty.close()
    }
    const saved = JSON.parse(fs.readFileSync(path.join(home, "cairn", "config.json"), "utf8"))
    expect(saved.url).toBe(server.baseUrl)
    const keys = await server.call((client) => client.apiKeys.list())
    expect(keys.keys.map((key) => key.name)).toContainEqual(expect.stringMatching(/^cairn CLI \(ada@/))
    const status = await runCli(["status", "--json"], { XDG_CONFIG_HOME: home })
    expect(status.code, status.output).toBe(0)
    expect(JSON.parse(status.stdout).credentials.kind).toBe("scoped_key")

    const wrong = startPty(["login", "--url", server.baseUrl, "--username", "ada"], { XDG_CONFIG_HOME: tempDir() }, {
      columns: 80,
      rows: 20
    })
    try {
      await wrong.waitFor("Password for ada", 60_000)
      wrong.typeLine("not the password")
      await wrong.waitFor("refused the username or the password", 30_000)
      expect(await wrong.waitForExit(60_000)).toBe(1)
    } finally {
      wrong.close()
    }
  }, scaled(180_000))

  it("exits 1 from status when the key is refused", async () => {
    const refused = await runCli(["status", "--url", server.baseUrl, "--key", "not-a-key"], { XDG_CONFIG_HOME: tempDir() })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain("none accepted")
    expect(refused.stderr).toMatch(/^cairn: .* refused these credentials/m)
  }, scaled(180_000))

  it("keeps ids whole in an 80-column table and takes a unique prefix or a cut id", async () => {
    const { session_id: sessionId } = await server.call((client) => client.sessions.create({ payload: { client_id: "first-hour" } }))
    const tasks = await Promise.all(
      [1, 2].map(() =>
        server.call((client) =>
          client.injection.inject({
            path: { id: sessionId },
            payload: {
              content: `a long prompt that will not fit in eighty columns at all, ${"words ".repeat(20)}`,
              run_agent: true,
              source: "api",
              notify: false
            }
          })
        )
      )
    )
    const ids = tasks.map((task) => task.task_id).filter((id): id is string => typeof id === "string")
    const pty = startPty(["tasks", "list", "--session", sessionId, "--url", server.baseUrl, "--key", server.apiKey], {
      XDG_CONFIG_HOME: home
    }, {
      columns: 80,
      rows: 30
    })
    try {
      await pty.waitFor(/^ID +STATUS +BOT/m, 60_000)
      expect(await pty.waitForExit(60_000)).toBe(0)
      const screen = pty.screen()
      for (const id of ids) expect(screen).toContain(id)
      expectWrapped(screen, 80)
    } finally {
      pty.close()
    }
    if (ids.length > 0) {
      const id = ids[0]!
      const shown = await cairn("tasks", "show", id.slice(0, 13))
      expect(shown.code, shown.output).toBe(0)
      expect(shown.stdout).toContain(id)
      const cut = await cairn("tasks", "show", `${id.slice(0, 20)}…`)
      expect(cut.stdout).toContain(id)
      const none = await cairn("tasks", "show", "ffffffff-no")
      expect(none.code).toBe(1)
      expect(none.stderr).toContain("no task has an id starting with ffffffff-no")
    }
  }, scaled(180_000))

  it("ingests with progress, skips empty and already stored files with exit 0, and says when a search matches nothing well", async () => {
    const folder = tempDir("cairn-ingest-")
    fs.writeFileSync(path.join(folder, "lighthouse.md"), "# Lighthouse\n\nThe keeper trims the lamp wick every evening.\n")
    fs.writeFileSync(path.join(folder, "empty.md"), "")
    const args = ["docs", "ingest", folder, "--integration", "firsthour", "--url", server.baseUrl, "--key", server.apiKey]
    const first = startPty(args, { XDG_CONFIG_HOME: home }, { columns: 80, rows: 20 })
    try {
      const screen = await first.waitFor("Stored 1 of 2 files as documents; 1 skipped", 60_000)
      expect(screen).toMatch(/ingest \[#+\] 100% 2\/2/)
      expect(screen).toContain("empty.md: skipped, empty")
      expect(await first.waitForExit(60_000)).toBe(0)
    } finally {
      first.close()
    }
    const again = await runCli(args, { XDG_CONFIG_HOME: home })
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain("Stored 0 of 2 files as documents; 2 skipped")
    expect(again.stderr).toContain("lighthouse.md: skipped, already stored")
    const listed = await server.call((client) => client.documents.list({ urlParams: { integration_id: "firsthour" } }))
    expect(listed.items.length).toBe(1)

    const found = await cairn("docs", "search", "lighthouse", "keeper", "--integration", "firsthour")
    expect(found.stdout).toMatch(/^1\. lighthouse\.md/m)
    const nonsense = await cairn("docs", "search", "zzqxv", "plughwort", "--integration", "firsthour")
    expect(nonsense.code).toBe(0)
    expect(nonsense.stdout).toContain("No document matches well")
  }, scaled(180_000))

  it("refuses a bot with an unknown tool, naming the known ones", async () => {
    const file = path.join(home, "tooly.yaml")
    fs.writeFileSync(file, "id: tooly\nname: Tooly\ntools:\n  - current_time\n  - teleport\n")
    const refused = await cairn("bots", "apply", file)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/unknown tool teleport; the server has: .*current_time/)
    const bots = await server.call((client) => client.bots.list())
    expect(bots.bots.map((bot) => bot.id)).not.toContain("tooly")
  }, scaled(180_000))

  it("prints the setup code of a first start in a plain box on stderr, with the address to open", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as net.AddressInfo
        probe.close(() => resolve(port))
      })
    })
    const child = spawn(process.execPath, [cairnBin, "serve"], {
      cwd: tempDir(),
      env: { ...process.env, DATA_DIR: tempDir(), API_KEY: "", HOST: "127.0.0.1", PORT: String(port), NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    let stdout = ""
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    child.stdout!.on("data", (chunk) => (stdout += chunk))
    try {
      const deadline = Date.now() + scaled(120_000)
      while (!stderr.includes("it works once.") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
      const box = stderr.split("\n").filter((line) => line.startsWith("|") || line.startsWith("+"))
      expect(box[0]).toMatch(/^\+-+\+$/)
      expect(box.join("\n")).toContain(`Open http://127.0.0.1:${port}/ and create the first admin`)
      expect(box.join("\n")).toMatch(/\| {6}[A-Za-z0-9_-]{20} +\|/)
      expect(new Set(box.map((line) => line.length)).size).toBe(1)
      expect(stderr).not.toContain("\u001b[")
      // The JSON log line is still written for machines.
      expect(stdout + stderr).toMatch(/No admin exists yet\. Create the first one with the setup code/)
    } finally {
      child.kill("SIGTERM")
    }
  }, scaled(180_000))
})
