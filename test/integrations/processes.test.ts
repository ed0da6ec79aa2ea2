/**
 * An integration's background process: not started until its REQUIRED_ENV resolves, started with
 * AGENT_BASE_URL and a working AGENT_API_KEY, restarted after a crash, restarted when its settings
 * change, stopped on shutdown.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/database.ts"
import { alive, json, startServer, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

describe("integration background processes", () => {
  const dir = tempDir("cairn-process-")
  const out = path.join(dir, "probe.log")
  const crashMarker = path.join(dir, "crash-once")
  let server: TestServer
  let stopped = false

  beforeAll(async () => {
    const root = path.join(dir, "integrations", "prober")
    fs.mkdirSync(root, { recursive: true })
    fs.writeFileSync(
      path.join(root, "process.ts"),
      "export const DESCRIPTION = \"Calls back into Cairn\"\nexport const CMD = [process.execPath, \"child.mjs\"]\nexport const REQUIRED_ENV = [\"PROBE_OUT\"]\n"
    )
    fs.writeFileSync(
      path.join(root, "setup.ts"),
      `export const SETUP = { env_vars: [{ key: "PROBE_OUT", required: true }, { key: "PROBE_MODE", default: "first" }, { key: "CRASH_MARKER", default: ${
        JSON.stringify(crashMarker)
      } }], api_key_preset: "read_only_monitor" }\n`
    )
    fs.writeFileSync(
      path.join(root, "child.mjs"),
      `import fs from "node:fs"
const response = await fetch(process.env.AGENT_BASE_URL + "/api/v1/admin/bots", { headers: { authorization: "Bearer " + process.env.AGENT_API_KEY } })
fs.appendFileSync(process.env.PROBE_OUT, JSON.stringify({ pid: process.pid, status: response.status, mode: process.env.PROBE_MODE, key: process.env.AGENT_API_KEY.slice(0, 4) }) + "\\n")
console.log("probe worker up", process.pid)
if (fs.existsSync(process.env.CRASH_MARKER)) { fs.rmSync(process.env.CRASH_MARKER); process.exit(3) }
setInterval(() => {}, 1000)
`
    )
    server = await startServer({
      backend: "pglite",
      env: { INTEGRATION_DIRS: path.join(dir, "integrations"), PROCESS_RESTART_BASE_MS: "200", PROCESS_STOP_GRACE_MS: "2000" }
    })
  })
  afterAll(async () => {
    if (!stopped) await server?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const status = async () => json(await server.request("/api/v1/admin/integrations/prober/process"))
  const lines = () => (fs.existsSync(out) ? fs.readFileSync(out, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [])

  it("waits for its required settings, then runs with a working AGENT_API_KEY", async () => {
    const waiting = await status()
    expect(waiting).toMatchObject({ state: "waiting_for_settings", missing_env: ["PROBE_OUT"], pid: null })
    expect(fs.existsSync(out)).toBe(false)

    fs.writeFileSync(crashMarker, "")
    const saved = await server.request("/api/v1/admin/integrations/prober/settings", {
      method: "PUT",
      body: JSON.stringify({ PROBE_OUT: out })
    })
    expect(saved.status).toBe(200)

    // First run crashes on purpose (the marker), the manager restarts it.
    const records = await waitFor(async () => (lines().length >= 2 ? lines() : undefined), "two process starts")
    expect(records[0].status).toBe(200)
    expect(records[0].key).toBe("ask_")
    expect(records[1].pid).not.toBe(records[0].pid)
    const running = await waitFor(async () => {
      const s = await status()
      return s.state === "running" && s.restarts >= 1 ? s : undefined
    }, "running after restart")
    expect(running.last_exit.code).toBe(3)
    expect(alive(running.pid)).toBe(true)
  })

  it("restarts when its settings change, with the new values", async () => {
    const before = await status()
    const saved = await server.request("/api/v1/admin/integrations/prober/settings", {
      method: "PUT",
      body: JSON.stringify({ PROBE_MODE: "second" })
    })
    expect(saved.status).toBe(200)
    const record = await waitFor(async () => lines().find((line) => line.mode === "second"), "a start with the new setting")
    expect(record.pid).not.toBe(before.pid)
    await waitFor(async () => (alive(before.pid) ? undefined : true), "the old process to stop")
  })

  it("stops its process on shutdown", async () => {
    const current = await waitFor(async () => {
      const s = await status()
      return s.state === "running" ? s : undefined
    }, "running")
    await server.close()
    stopped = true
    await waitFor(async () => (alive(current.pid) ? undefined : true), "the process to stop", 10_000)
  })
})
