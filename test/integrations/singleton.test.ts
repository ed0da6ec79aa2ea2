/**
 * A singleton worker with two `cairn serve` processes on one PostgreSQL: exactly one runs it, the
 * other shows `leader_elsewhere`; after `kill -9` of the leader the other takes over (LEADER_RETRY_MS
 * after PostgreSQL drops the dead session's lock: how soon is a timing, not asserted here).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createTestDatabase, tempDir, type TestDatabase } from "../support/database.ts"
import { linesOf, waitFor, writeIntegration } from "../support/integrations.ts"
import { type ChildServer, json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

describe("a singleton worker across server processes (postgres)", () => {
  const dir = tempDir("cairn-singleton-")
  const beats = path.join(dir, "beats.log")
  const servers: Array<ChildServer> = []
  let db: TestDatabase

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop("SIGKILL")))
    await db?.drop()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("runs in exactly one process, and another takes over after kill -9", async () => {
    writeIntegration(dir, "poller", {
      "worker.ts": `import fs from "node:fs"
export default {
  name: "poll",
  singleton: true,
  run: async (_cairn, worker) => {
    do fs.appendFileSync(${JSON.stringify(beats)}, process.pid + " " + Date.now() + "\\n")
    while (await worker.sleep(100))
  }
}
`
    })
    db = await createTestDatabase("postgres", { migrated: true })
    const env = { INTEGRATION_DIRS: dir, LEADER_RETRY_MS: "300", LEADER_CHECK_MS: "500" }
    servers.push(...(await Promise.all([spawnServer(db, env), spawnServer(db, env)])))
    const pids = new Set(servers.map((server) => server.process.pid))
    const beatsNow = () => linesOf(beats).map((line) => ({ pid: Number(line.split(" ")[0]), at: Number(line.split(" ")[1]) }))

    await waitFor(() => (beatsNow().length >= 5 ? true : undefined), "the leader's beats")
    // Both processes are up and have tried; over two more seconds, only one ever beats.
    await waitFor(async () => {
      const states = await Promise.all(
        servers.map(async (server) => (await json(await server.request("/api/v1/admin/integrations/poller/workers"))).workers[0].state)
      )
      return states.sort().join(",") === "leader_elsewhere,running" ? true : undefined
    }, "one leader and one follower")
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const leaders = new Set(beatsNow().map((beat) => beat.pid))
    expect(leaders.size).toBe(1)
    const leaderPid = [...leaders][0]!
    expect(pids.has(leaderPid)).toBe(true)

    const leader = servers.find((server) => server.process.pid === leaderPid)!
    const follower = servers.find((server) => server.process.pid !== leaderPid)!
    await leader.stop("SIGKILL")
    // PostgreSQL frees a killed process's lock at once; the follower tries every 300 ms.
    const first = await waitFor(() => beatsNow().find((beat) => beat.pid === follower.process.pid), "the follower to take over", 15_000)
    // It took over from the dead leader, not beside it: its first beat is after the leader's last.
    expect(first.at).toBeGreaterThanOrEqual(Math.max(...beatsNow().filter((beat) => beat.pid === leaderPid).map((beat) => beat.at)))
    expect((await json(await follower.request("/api/v1/admin/integrations/poller/workers"))).workers[0].state).toBe("running")
    // Two starts (side by side), then the waits above.
  }, spawnDeadlineMs + scaled(90_000))
})
