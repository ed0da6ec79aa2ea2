/**
 * Data survives a clean restart and a SIGKILL after commit, on both backends, with the real
 * `cairn serve` process. SIGTERM shuts down cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

const setting = (list: { settings: Array<{ key: string; value: unknown }> }, key: string) => list.settings.find((s) => s.key === key)?.value

describe.each(backends)("durability (%s)", (backend) => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase(backend, { migrated: true })
  })
  afterAll(async () => {
    await db?.drop()
  })

  // Three starts of `cairn serve` in turn, each a minute or more on a busy machine (longer than the
  // suite's default for a whole test): the test has each start's deadline, and a minute for the rest.
  it("keeps committed data across SIGTERM and across SIGKILL", { timeout: 3 * spawnDeadlineMs + scaled(60_000) }, async () => {
    const first = await spawnServer(db)
    const put = await first.request("/api/v1/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ RATE_LIMIT_DEFAULT: "77/minute" })
    })
    expect(put.status).toBe(200)
    const code = await first.stop("SIGTERM")
    expect(code).toBe(0)
    expect(first.output()).not.toContain("ERROR")

    const second = await spawnServer(db)
    expect(setting(await json(await second.request("/api/v1/admin/settings")), "RATE_LIMIT_DEFAULT")).toBe("77/minute")
    const put2 = await second.request("/api/v1/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ RATE_LIMIT_CHAT: "5/minute", SYSTEM_PAUSED: true })
    })
    expect(put2.status).toBe(200)
    // The write was acknowledged: it must survive an abrupt kill.
    await second.stop("SIGKILL")

    const third = await spawnServer(db)
    const list = await json(await third.request("/api/v1/admin/settings"))
    expect(setting(list, "RATE_LIMIT_DEFAULT")).toBe("77/minute")
    expect(setting(list, "RATE_LIMIT_CHAT")).toBe("5/minute")
    expect(setting(list, "SYSTEM_PAUSED")).toBe(true)
    expect(await third.stop("SIGTERM")).toBe(0)
  })
})
