/**
 * A bridge message's dead letter, retried (issue 56): the retry hands it back to the bridge at once
 * (`cairn.inbound.onRetry`), which routes it and answers it once, without waiting for a catch-up
 * (the health worker catches up only at its start and after an outage). On both databases; the
 * dead letter is made as the ledger leaves one that exhausted its attempts, with the server stopped.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeChatServer, startFakeChatServer } from "../fixtures/chatServer.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const TOKEN = "webhook-token-0123456789"
const CHAT = "iMessage;-;+15550077"
const REPLY = "Hello again from the bot"

describe.each(backends)("a retried dead bridge message (%s)", (backend) => {
  let chat: FakeChatServer
  let llm: FakeLlm
  let db: TestDatabase
  let server: TestServer

  const start = async () => {
    server = await startServer({
      backend,
      db,
      env: {
        LLM_MAX_RETRIES: "0",
        DISPATCH_RETRY_BASE_MS: "200",
        TASK_POLL_MS: "50",
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model"
      }
    })
  }
  const health = async () =>
    ((await json(await server.request("/api/v1/admin/integrations/msgbridge/workers"))).workers as Array<any>).find((w) =>
      w.name === "health"
    )
  /** The health worker's catch-up since it started (the one every start makes). */
  const caughtUp = () =>
    waitFor(async () => {
      const worker = await health()
      const at = worker?.detail?.last_catch_up_at
      return worker?.state === "running" && typeof at === "string" && Date.parse(at) >= Date.parse(worker.started_at) ? at : undefined
    }, "the bridge's catch-up")

  beforeAll(async () => {
    chat = await startFakeChatServer()
    llm = await startFakeLlm({ defaultReply: { text: REPLY } })
    db = await createTestDatabase(backend)
    await start()
    const saved = await server.request("/api/v1/admin/integrations/msgbridge/settings", {
      method: "PUT",
      body: JSON.stringify({
        MSGBRIDGE_SERVER_URL: chat.url,
        MSGBRIDGE_PASSWORD: chat.password,
        MSGBRIDGE_WEBHOOK_TOKEN: TOKEN,
        MSGBRIDGE_LEGACY_CLIENT: "false",
        MSGBRIDGE_HEALTH_INTERVAL_SECONDS: "1"
      })
    })
    expect(saved.status).toBe(200)
    await caughtUp()
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    await chat?.close()
  })

  it("is routed and answered once at once, not at the next catch-up", async () => {
    const message = chat.receive({ chatGuid: CHAT, text: "are you there?" })
    const first = await chat.webhook(`${server.baseUrl}/integrations/msgbridge/webhook?token=${TOKEN}`, "new-message", message)
    expect(first.body).toMatchObject({ status: "ignored", reason: "unbound" })
    await server.close()
    await withDatabase(
      db,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE inbound_items SET state = 'dead', reason = 'attempts exhausted', attempts = 5, last_error = 'routing failed'
                   WHERE source = 'msgbridge' AND external_id = ${message.guid}`
      })
    )
    await start()
    const lastCatchUp = await caughtUp()
    const channel = (await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "retried", bot_id: "default" }) })
    )).id as string
    const bound = await server.request(`/api/v1/channels/${channel}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "msgbridge", client_id: `msgbridge:${CHAT}` })
    })
    expect(bound.status).toBe(201)

    const dead = await waitFor(async () => {
      const list = await json(await server.request("/api/v1/admin/dead-letters?source=msgbridge"))
      return (list.items as Array<any>).find((item) => item.external_id === message.guid)
    }, "the dead letter")
    const retried = await server.request(`/api/v1/admin/dead-letters/${dead.id}/retry`, { method: "POST" })
    expect(retried.status).toBe(200)
    expect((await json(retried)).state).toBe("received")
    await waitFor(async () => (chat.sends().some((s) => s.chatGuid === CHAT) ? true : undefined), "the retried message's answer")
    expect(chat.sends().filter((s) => s.chatGuid === CHAT).map((s) => s.message)).toEqual([REPLY])
    expect((await health()).detail.last_catch_up_at).toBe(lastCatchUp)
    // The webhook sent again (a replay) finds it decided.
    const replay = await chat.webhook(`${server.baseUrl}/integrations/msgbridge/webhook?token=${TOKEN}`, "new-message", message)
    expect(replay.body).toMatchObject({ status: "ignored", reason: "duplicate" })
    expect(chat.sends().filter((s) => s.chatGuid === CHAT)).toHaveLength(1)
  })
})
