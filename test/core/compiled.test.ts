/**
 * The compiled start: the build `npm install` runs gives a dist/ that `cairn serve` runs as one
 * process (no tsx, whose esbuild service would be a child), with the project's integrations and the
 * lazily loaded docs pages working from it; and a build made while that server runs leaves it the
 * build it started on, so what it loads on first use afterwards (a provider family) still loads.
 */
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type FakeAnthropic, startFakeAnthropic } from "../fixtures/fakeAnthropic.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { childPids, type ChildServer, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

const root = path.resolve(import.meta.dirname, "../..")
const current = path.join(root, "dist/server")
const ANTHROPIC_KEY = "sk-ant-test-0123456789"

const build = () => {
  const run = spawnSync(process.execPath, [path.join(root, "bin/build.mjs")], { cwd: root, encoding: "utf8" })
  expect(run.status, run.stderr).toBe(0)
}

describe("compiled server", () => {
  let db: TestDatabase | undefined
  let server: ChildServer | undefined
  let claude: FakeAnthropic | undefined
  let serversBuild = ""
  afterAll(async () => {
    await server?.stop()
    await Promise.all([db?.drop(), claude?.close()])
  })

  it("builds dist/ and serves from it as one process: health, an integration's route, a docs page", async () => {
    build()
    expect(fs.existsSync(path.join(current, "src/cli.js"))).toBe(true)
    expect(fs.existsSync(path.join(current, "integrations/example/router.js"))).toBe(true)

    // PostgreSQL: a first start there needs no initdb, so the test spends its time on what it checks.
    db = await createTestDatabase("postgres", { migrated: true })
    claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY, defaultReply: { text: "Hello from the first build" } })
    serversBuild = fs.realpathSync(current)
    server = await spawnServer(db, { ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: claude.url })
    const ping = await server.request("/integrations/example/ping")
    expect(ping.status).toBe(200)
    expect(await ping.json()).toMatchObject({ status: "ok", integration: "example" })
    const docs = await server.request("/redoc", { auth: null })
    expect(docs.status).toBe(200)
    expect(await docs.text()).toContain("/api/v1/admin/settings")
    expect(childPids(server.process.pid!)).toEqual([])
  }, spawnDeadlineMs + scaled(120_000))

  it("leaves a running server its build when dist/ is built again: a provider family first used afterwards loads", async () => {
    expect(server, "the server of the test above").toBeDefined()
    // An old build whose only process has ended: the next builds remove it.
    const ended = spawnSync(process.execPath, ["-e", "process.pid"]).pid!
    const abandoned = path.join(path.dirname(current), "server-000000000000001-1")
    fs.mkdirSync(path.join(abandoned, ".running"), { recursive: true })
    fs.writeFileSync(path.join(abandoned, ".running", String(ended)), "")
    build()
    build()
    expect(fs.realpathSync(current)).not.toBe(serversBuild)
    // The family is a chunk of the bundle the server has not loaded yet (bin/build.mjs).
    expect(fs.readdirSync(path.join(serversBuild, "chunks")).filter((file) => file.startsWith("Anthropic-"))).toHaveLength(1)

    // The Anthropic family loads on its first call (src/providers/Providers.ts), from the server's build.
    const created = await server!.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "claude-after-build", name: "Claude after a build", model: "anthropic/claude-fake" })
    })
    expect(created.status).toBe(201)
    const answer = await server!.request("/chat", {
      method: "POST",
      body: JSON.stringify({ client_id: "compiled", session_id: crypto.randomUUID(), bot_id: "claude-after-build", message: "hi" })
    })
    expect(answer.status).toBe(200)
    expect(JSON.stringify(await answer.json())).toContain("Hello from the first build")
    expect(claude!.requestsTo("/v1/messages")).toHaveLength(1)

    // A build no process runs is removed; the one the server runs stays.
    expect(fs.existsSync(abandoned)).toBe(false)
    expect(fs.existsSync(serversBuild)).toBe(true)
  }, scaled(120_000))
})
