/**
 * SIGTERM while runs are under way: they get SHUTDOWN_GRACE_MS to finish (a drained host finishes
 * what it took); a run still going then stops, its stream ends with error then response, and the
 * process exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { spawnServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { eventually, scaled } from "../support/time.ts"

describe("graceful shutdown with an open stream", () => {
  let llm: FakeLlm
  let db: TestDatabase
  beforeAll(async () => {
    llm = await startFakeLlm()
    db = await createTestDatabase("pglite", { migrated: true })
  })
  afterAll(async () => {
    await llm?.close()
    await db?.drop()
  })

  it("lets a run under way finish within the grace: a blocking chat taken before SIGTERM answers in full", async () => {
    llm.script({ text: "all of it arrives", chunkDelayMs: 300 })
    const server = await spawnServer(db, {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "sk-x",
      DEFAULT_MODEL: "fake-model",
      SHUTDOWN_GRACE_MS: String(scaled(30_000))
    })
    const asked = llm.requestsTo("/v1/chat/completions").length
    const answer = server.request("/chat", { method: "POST", body: JSON.stringify({ message: "Finish, please", client_id: "grace" }) })
    await eventually(() => llm.requestsTo("/v1/chat/completions").length > asked, "the model asked")
    const exit = server.stop("SIGTERM")
    const response = await answer
    expect(response.status).toBe(200)
    expect(((await response.json()) as { response: string }).response).toBe("all of it arrives")
    expect(await exit).toBe(0)
  })

  it("ends the stream with a final event and keeps the partial turn", async () => {
    llm.script({ text: "one two three four five six seven eight nine ten", chunkDelayMs: 400 })
    const server = await spawnServer(db, { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-x", DEFAULT_MODEL: "fake-model" })
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({ message: "Go slowly", client_id: "shutdown" })
    })
    const sse = readSse(response)
    await sse.until((event) => event.data.type === "assistant_text")
    const exit = server.stop("SIGTERM")
    const rest = await sse.rest()
    expect(rest.map((event) => event.data.type).slice(-2)).toEqual(["error", "response"])
    expect(rest.at(-2)!.data.message).toContain("shutting down")
    expect(await exit).toBe(0)

    const again = await spawnServer(db)
    const session = (await (await again.request("/sessions?client_id=shutdown")).json()) as Array<{ id: string }>
    const messages = (await (await again.request(`/api/v1/sessions/${session[0]!.id}/messages`)).json()) as Array<{
      role: string
      metadata: Record<string, unknown>
    }>
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"])
    expect(messages[1]!.metadata.cancelled).toBe(true)
    expect(await again.stop("SIGTERM")).toBe(0)
  })
})
