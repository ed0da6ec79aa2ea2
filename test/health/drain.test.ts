/**
 * A stop, as a load balancer sees it: on SIGTERM readiness turns 503 `draining` first, while the
 * server still serves (an open stream still gets its tokens) for DRAIN_DELAY_MS; then it drains as
 * before (the stream ends with `error` then `response`) and exits 0. And the hard memory limit:
 * with a supervisor, the server drains the same way and exits with the restart code.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { restartExitCode } from "../../src/operations/Restart.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { scaled, waitFor } from "../support/time.ts"

describe.each(backends)("readiness at a stop (%s)", (backend) => {
  let llm: FakeLlm
  let db: TestDatabase
  beforeAll(async () => {
    llm = await startFakeLlm()
    db = await createTestDatabase(backend, { migrated: true })
  })
  afterAll(async () => {
    await llm?.close()
    await db?.drop()
  })

  // The stop's grace: its last quarter (2 s) is the stopped run's to store its end and send its
  // last events, which a busy machine needs; the 20 s stream outlasts the rest.
  const stopGrace = String(scaled(8000))

  const slowStream = () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ")
    llm.script({ text: words, chunkDelayMs: 100 })
  }

  it("turns not ready on SIGTERM before the drain, serving meanwhile, then drains", async () => {
    // Long enough for the probes below on a busy machine; the stream outlasts it.
    const server = await spawnServer(db, { ...fakeLlmEnv(llm), DRAIN_DELAY_MS: String(scaled(4000)), SHUTDOWN_GRACE_MS: stopGrace })
    expect((await server.request("/health/ready", { auth: null })).status).toBe(200)
    slowStream()
    const stream = readSse(
      await server.request("/chat/stream", { method: "POST", body: JSON.stringify({ message: "Go slowly", client_id: "drain" }) })
    )
    await stream.until((event) => event.data.type === "assistant_text")

    const exit = server.stop("SIGTERM")
    const draining = await waitFor(async () => {
      const response = await server.request("/health/ready", { auth: null })
      return response.status === 503 ? json(response) : undefined
    }, "readiness to turn 503")
    expect(draining.status).toBe("draining")
    expect(draining.checks.draining.ok).toBe(false)
    // Still live, and the open stream still gets tokens: the drain has not begun.
    expect((await server.request("/health", { auth: null })).status).toBe(200)
    expect((await stream.next())?.data.type).toBe("assistant_text")

    const rest = await stream.rest()
    expect(rest.map((event) => event.data.type).slice(-2)).toEqual(["error", "response"])
    expect(await exit).toBe(0)
  }, spawnDeadlineMs + scaled(60_000))

  it("past the hard memory limit, drains and exits for its supervisor to restart it", async () => {
    const server = await spawnServer(db, { ...fakeLlmEnv(llm), SUPERVISED: "true", MEMORY_SAMPLE_MS: "50", SHUTDOWN_GRACE_MS: stopGrace })
    slowStream()
    const stream = readSse(
      await server.request("/chat/stream", { method: "POST", body: JSON.stringify({ message: "Go slowly", client_id: "hard-limit" }) })
    )
    await stream.until((event) => event.data.type === "assistant_text")
    const exited = new Promise<number | null>((resolve) => server.process.on("exit", (code) => resolve(code)))
    const set = await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ MEMORY_HARD_LIMIT_MB: 1 }) })
    expect(set.status).toBe(200)
    // The open stream is drained as at any stop: it ends with a final event, not a cut.
    const rest = await stream.rest()
    expect(rest.map((event) => event.data.type).slice(-2)).toEqual(["error", "response"])
    expect(await exited).toBe(restartExitCode)
    expect(server.output()).toContain("above the hard limit of 1 MB: draining and restarting through configured")
  }, spawnDeadlineMs + scaled(60_000))
})
