/**
 * Credentials in URLs (a webhook URL, a credential as a whole; a provider base URL's `?api-key=`)
 * over the HTTP API: masked in every answer (a webhook URL down to its scheme and host), sealed in the database (read once no server holds it), still sent in
 * the clear to the target, kept when an update sends the mask back; rows an older release stored in
 * the clear are sealed at the next start.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const TOKEN = "hook-token-abc123"
const PROVIDER_KEY = "prov-query-key-98765"
const OLD_TOKEN = "old-clear-token-4242"

describe.each(backends)("credentials in URLs (%s)", (backend) => {
  let db: TestDatabase
  let llm: FakeLlm
  let receiver: WebhookReceiver
  let server: TestServer | undefined

  const start = async () => {
    server = await startServer({
      backend,
      db,
      env: { ...fakeLlmEnv(llm), TASK_POLL_MS: "50", WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", DISPATCH_MAX_ATTEMPTS: "1", LOG_LEVEL: "info" }
    })
    return server
  }
  const stop = async () => {
    await server?.close()
    server = undefined
  }
  const read = <A>(query: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    withDatabase(db, Effect.flatMap(SqlClient.SqlClient, query))

  beforeAll(async () => {
    db = await createTestDatabase(backend, { migrated: true })
    llm = await startFakeLlm()
    receiver = await startReceiver({ status: 204 })
  })
  afterAll(async () => {
    await stop()
    await receiver?.close()
    await llm?.close()
    await db?.drop()
  })

  it("masks them in answers, seals them at rest, and calls the webhook with them in the clear", async () => {
    const s = await start()
    const hookUrl = `${receiver.url}/hook?x=1&token=${TOKEN}`
    const created = await s.request("/api/v1/sessions", {
      method: "POST",
      body: JSON.stringify({ client_id: "url-secrets", dispatch_config: { dispatch_type: "webhook", url: hookUrl } })
    })
    expect(created.status).toBe(200)
    const sessionId = (await json(created)).session_id as string
    const sessions = await (await s.request("/sessions")).text()
    expect(sessions).not.toContain(TOKEN)
    // A dispatch URL is a credential as a whole: its scheme and host are all an answer shows.
    expect(sessions).toContain(`${receiver.url}/****`)
    expect(sessions).not.toContain("/hook")

    const injected = await s.request(`/api/v1/sessions/${sessionId}/messages`, {
      method: "POST",
      body: JSON.stringify({
        content: "report please",
        source: "test",
        run_agent: true,
        notify: true,
        dispatch_type: "webhook",
        dispatch_config: { url: hookUrl }
      })
    })
    expect(injected.status).toBe(200)
    const taskId = (await json(injected)).task_id as string
    const [delivered] = await receiver.waitFor(1, 20_000)
    expect(delivered!.url).toBe(`/hook?x=1&token=${TOKEN}`)
    for (const path of ["/api/v1/tasks", `/api/v1/tasks/${taskId}`]) {
      const text = await (await s.request(path)).text()
      expect(text).not.toContain(TOKEN)
      expect(text).toContain(`${receiver.url}/****`)
    }

    // A provider whose base URL carries its key in the query: masked, and kept when the mask is sent back.
    const provider = await s.request("/api/v1/admin/providers", {
      method: "POST",
      body: JSON.stringify({ id: "querykey", base_url: `${llm.url}?api-key=${PROVIDER_KEY}` })
    })
    expect(provider.status).toBe(201)
    const shown = await json(provider)
    expect(shown.base_url).toBe(`${llm.url}?api-key=****`)
    const kept = await s.request("/api/v1/admin/providers/querykey", { method: "PUT", body: JSON.stringify({ base_url: shown.base_url }) })
    expect(kept.status).toBe(200)
    expect(JSON.stringify(await json(kept))).not.toContain(PROVIDER_KEY)
    const listed = await (await s.request("/api/v1/admin/providers")).text()
    expect(listed).not.toContain(PROVIDER_KEY)
    // The mask sent to another origin has nothing to keep there: refused, nothing changed.
    const moved = await s.request("/api/v1/admin/providers/querykey", {
      method: "PUT",
      body: JSON.stringify({ base_url: "https://elsewhere.example/v1?api-key=****" })
    })
    expect(moved.status).toBe(422)
    await stop()

    const rows = await read((sql) =>
      Effect.all({
        sessions: sql<{ dispatch_config: unknown }>`SELECT dispatch_config FROM sessions WHERE client_id = 'url-secrets'`,
        tasks: sql<{ dispatch_config: unknown }>`SELECT dispatch_config FROM tasks WHERE id = ${taskId}`,
        providers: sql<{ base_url: string }>`SELECT base_url FROM llm_providers WHERE id = 'querykey'`
      })
    )
    const stored = JSON.stringify(rows)
    expect(stored).not.toContain(TOKEN)
    expect(stored).not.toContain(PROVIDER_KEY)
    expect(stored).not.toContain("/hook")
    expect(stored).toContain(`${receiver.url}/sealed%3A`)
    expect(rows.providers[0]!.base_url).toMatch(/\?api-key=sealed%3A/)
  })

  it("seals at the next start what an older release stored in the clear, and still delivers with it", async () => {
    const clearUrl = `${receiver.url}/old?token=${OLD_TOKEN}`
    await read((sql) =>
      Effect.gen(function*() {
        yield* sql`UPDATE sessions SET dispatch_config = ${
          JSON.stringify({ dispatch_type: "webhook", url: clearUrl })
        }::jsonb WHERE client_id = 'url-secrets'`
        yield* sql`INSERT INTO pending_reseals (name) VALUES ('sessions.dispatch_config') ON CONFLICT (name) DO NOTHING`
      })
    )
    const s = await start()
    const before = receiver.requests.length
    const listed = await json(await s.request("/sessions"))
    const session = (Array.isArray(listed) ? listed : listed.sessions).find((x: { client_id: string }) => x.client_id === "url-secrets")
    expect(JSON.stringify(session)).toContain(`${receiver.url}/****`)
    expect(JSON.stringify(session)).not.toContain("/old")
    // The session's dispatch_config is the default target of a notified task: the clear token is sent.
    const injected = await s.request(`/api/v1/sessions/${session.id}/messages`, {
      method: "POST",
      body: JSON.stringify({ content: "again", source: "test", run_agent: true, notify: true })
    })
    expect(injected.status).toBe(200)
    const requests = await receiver.waitFor(before + 1, 20_000)
    expect(requests[before]!.url).toBe(`/old?token=${OLD_TOKEN}`)
    await stop()
    const rows = await read((sql) =>
      Effect.all({
        session: sql<{ dispatch_config: unknown }>`SELECT dispatch_config FROM sessions WHERE client_id = 'url-secrets'`,
        pending: sql<{ name: string }>`SELECT name FROM pending_reseals`
      })
    )
    expect(JSON.stringify(rows.session)).not.toContain(OLD_TOKEN)
    expect(JSON.stringify(rows.session)).not.toContain("/old")
    expect(JSON.stringify(rows.session)).toContain(`${receiver.url}/sealed%3A`)
    expect(rows.pending).toEqual([])
  })
})
