/**
 * Integration workers on both backends: started when their settings resolve and stopped when they
 * go, restarted with a growing backoff after failures (the error in their status), registered by
 * `worker.ts` or `cairn.registerWorker`; the example integration's worker uses the store. And with
 * a real `cairn serve`: SIGTERM stops workers within the grace, even one that ignores its signal.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, createTestDatabase, tempDir } from "../support/database.ts"
import { linesOf, waitFor, writeIntegration } from "../support/integrations.ts"
import { json, spawnDeadlineMs, spawnServer, startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

/** A worker that appends a tick to TICK_FILE every 50 ms and writes "stopped" when told to stop. */
const ticker = {
  "setup.ts": `export const SETUP = { env_vars: [{ key: "TICK_FILE", required: true }, { key: "TICK_LABEL", default: "a" }] }\n`,
  "worker.ts": `import fs from "node:fs"
export default {
  name: "ticker",
  description: "Ticks into a file",
  requiredSettings: ["TICK_FILE"],
  run: async (cairn, worker) => {
    const file = worker.settings.TICK_FILE
    while (await worker.sleep(50)) fs.appendFileSync(file, "tick " + worker.settings.TICK_LABEL + "\\n")
    fs.appendFileSync(file, "stopped " + worker.settings.TICK_LABEL + "\\n")
  }
}
`
}

/** Fails its first three runs, then stays up; its start times are readable over its route. */
const crasher = {
  "state.ts": `export const starts: Array<number> = []\n`,
  "hooks.ts": `import { starts } from "./state.ts"
export default (cairn) => {
  cairn.registerWorker({
    name: "crashy",
    run: async (_cairn, worker) => {
      starts.push(Date.now())
      if (starts.length <= 3) throw new Error("boom " + starts.length)
      await new Promise((resolve) => worker.signal.addEventListener("abort", resolve))
    }
  })
}
`,
  "router.ts": `import { starts } from "./state.ts"
export default [{ method: "GET", path: "/starts", description: "start times", scope: "operations:read", handler: () => ({ starts }) }]
`
}

describe.each(backends)("integration workers (%s)", (backend) => {
  const dir = tempDir("cairn-workers-")
  const tickFile = path.join(dir, "ticks.log")
  let server: TestServer

  beforeAll(async () => {
    writeIntegration(dir, "ticker", ticker)
    writeIntegration(dir, "crasher", crasher)
    server = await startServer({
      backend,
      env: {
        INTEGRATION_DIRS: [dir, path.resolve("integrations")].join(","),
        WORKER_RESTART_BASE_MS: "100",
        WORKER_RESTART_MAX_MS: "5000",
        WORKER_SETTINGS_POLL_MS: "200",
        EXAMPLE_SNAPSHOT_INTERVAL_MS: "100"
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const workersOf = async (id: string) => (await json(await server.request(`/api/v1/admin/integrations/${id}/workers`))).workers
  const stateOf = async (id: string) => (await workersOf(id))[0]?.state
  const putSettings = (id: string, values: Record<string, unknown>) =>
    server.request(`/api/v1/admin/integrations/${id}/settings`, { method: "PUT", body: JSON.stringify(values) })

  it("waits for its required settings, runs once they are set, and stops when they go", async () => {
    const waiting = await waitFor(async () => {
      const workers = await workersOf("ticker")
      return workers[0]?.state === "starting" ? undefined : workers
    }, "the first settings read")
    expect(waiting).toEqual([
      expect.objectContaining({ name: "ticker", state: "waiting_for_settings", missing_settings: ["TICK_FILE"], singleton: false })
    ])
    expect(linesOf(tickFile)).toEqual([])

    expect((await putSettings("ticker", { TICK_FILE: tickFile })).status).toBe(200)
    await waitFor(() => (linesOf(tickFile).length >= 3 ? true : undefined), "ticks")
    expect(await stateOf("ticker")).toBe("running")
    const summary = (await json(await server.request("/api/v1/admin/integrations"))).integrations.find((i: any) => i.id === "ticker")
    expect(summary.parts).toContain("worker")
    expect(summary.workers).toEqual([expect.objectContaining({ name: "ticker", state: "running" })])

    // A changed setting restarts it with the new value: the old run is told to stop first.
    expect((await putSettings("ticker", { TICK_LABEL: "b" })).status).toBe(200)
    await waitFor(() => (linesOf(tickFile).includes("tick b") ? true : undefined), "ticks with the new label")
    const lines = linesOf(tickFile)
    expect(lines.indexOf("stopped a")).toBeGreaterThan(-1)
    expect(lines.indexOf("stopped a")).toBeLessThan(lines.indexOf("tick b"))

    expect((await putSettings("ticker", { TICK_FILE: null })).status).toBe(200)
    await waitFor(async () => ((await stateOf("ticker")) === "waiting_for_settings" ? true : undefined), "the worker to stop")
    await waitFor(() => (linesOf(tickFile).at(-1) === "stopped b" ? true : undefined), "its stop to be written")
    const after = linesOf(tickFile).length
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(linesOf(tickFile).length).toBe(after)
  })

  it("restarts a failing worker with a growing backoff and shows its last error", async () => {
    const starts = await waitFor(async () => {
      const list: Array<number> = (await json(await server.request("/integrations/crasher/starts"))).starts
      return list.length >= 4 ? list : undefined
    }, "four starts")
    const gaps = [starts[1]! - starts[0]!, starts[2]! - starts[1]!, starts[3]! - starts[2]!]
    // 100, 200, 400 ms, each with jitter in [50%, 100%]: the third wait's floor (200) is above the
    // first wait's ceiling (100). Lower bounds, since a loaded machine only makes a gap longer.
    expect(gaps[0]).toBeGreaterThanOrEqual(45)
    expect(gaps[2]).toBeGreaterThanOrEqual(195)
    const [status] = await waitFor(async () => {
      const workers = await workersOf("crasher")
      return workers[0]?.state === "running" ? workers : undefined
    }, "the worker to stay up")
    expect(status).toMatchObject({ name: "crashy", restarts: 3, last_error: { message: "boom 3" } })
    expect(Date.parse(status.last_error.at)).toBeGreaterThan(0)
  })

  it("runs the example integration's stats worker, which keeps its snapshots in the store", async () => {
    const stats = await waitFor(async () => {
      const body = await json(await server.request("/integrations/example/stats"))
      return body.snapshot_times.length >= 2 ? body : undefined
    }, "two snapshots")
    expect(stats.latest_snapshot).toMatchObject({ responses_seen: expect.any(Number) })
    expect(stats.snapshot_times[0] > stats.snapshot_times[1]).toBe(true)
    const [worker] = await workersOf("example")
    expect(worker).toMatchObject({ name: "stats-snapshot", state: "running", detail: { last_snapshot_at: expect.any(String) } })
  })

  it("refuses a worker definition that breaks the contract, naming the file", async () => {
    const bad = tempDir("cairn-bad-worker-")
    writeIntegration(bad, "broken", { "worker.ts": `export default { name: "no run" }\n` })
    const other = await startServer({ backend, env: { INTEGRATION_DIRS: bad } })
    try {
      const summary = (await json(await other.request("/api/v1/admin/integrations"))).integrations.find((i: any) => i.id === "broken")
      expect(summary).toMatchObject({ status: "failed", error: expect.stringMatching(/^worker: run must be a function/) })
    } finally {
      await other.close()
      fs.rmSync(bad, { recursive: true, force: true })
    }
  })
})

describe("workers at shutdown (cairn serve)", () => {
  it("SIGTERM stops every worker, one that ignores its signal included: that one is left after its grace", async () => {
    const dir = tempDir("cairn-workers-stop-")
    const tickFile = path.join(dir, "ticks.log")
    writeIntegration(dir, "ticker", ticker)
    writeIntegration(dir, "stubborn", {
      "worker.ts": `export default { name: "stubborn", run: () => new Promise(() => {}) }\n`
    })
    const db = await createTestDatabase("pglite", { migrated: true })
    const server = await spawnServer(db, {
      INTEGRATION_DIRS: dir,
      TICK_FILE: tickFile,
      WORKER_STOP_GRACE_MS: "1000",
      SHUTDOWN_GRACE_MS: "3000"
    })
    try {
      await waitFor(() => (linesOf(tickFile).length >= 2 ? true : undefined), "ticks (TICK_FILE from the environment)")
      expect((await json(await server.request("/api/v1/admin/integrations/stubborn/workers"))).workers[0].state).toBe("running")
      // The stubborn worker's promise never settles: the process exits (cleanly) only because its
      // grace (1 s) ran out, the ticker having stopped as asked.
      const code = await server.stop("SIGTERM")
      expect(code).toBe(0)
      expect(linesOf(tickFile).at(-1)).toBe("stopped a")
    } finally {
      await db.drop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, spawnDeadlineMs + scaled(60_000))
})
