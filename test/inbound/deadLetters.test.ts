/**
 * The dead-letter queue (issue 56, item 3), on both databases: a result delivery that exhausted its
 * attempts is an inbound item of source `dispatch` in state `dead`, with its last error; the API
 * lists it (filtered, with counts per source), a retry delivers it from its first attempt, a
 * discard keeps it as `discarded`; an id that is no dead letter is a 404 or a 409, never a 5xx.
 * The ledger keeps a bridge message's decision: one left alone as unbound stays so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, queueForWebhook, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("dead letters (%s)", (backend) => {
  let llm: FakeLlm
  let receiver: WebhookReceiver
  let server: TestServer
  let counter = 0

  const inject = async (content: string) =>
    (await queueForWebhook(server, content, { url: receiver.url, clientId: `dead-${++counter}` })).task
  const deadLetters = async (query = "") => json(await server.request(`/api/v1/admin/dead-letters${query}`))
  const deadOf = (taskId: string) =>
    waitFor(
      async () => {
        const list = await deadLetters("?source=dispatch")
        return list.items.find((item: any) => item.external_id === taskId)
      },
      `task ${taskId} in the dead-letter queue`,
      30_000
    )

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "the answer" } })
    receiver = await startReceiver({ status: 500 })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        TASK_POLL_MS: "50",
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        DISPATCH_MAX_ATTEMPTS: "2",
        DISPATCH_RETRY_BASE_MS: "50"
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await receiver?.close()
    await llm?.close()
  })

  it("a delivery that gave up is a dead letter; retry delivers it once, discard keeps it", async () => {
    const taskId = await inject("deliver me")
    const dead = await deadOf(taskId)
    expect(dead).toMatchObject({ source: "dispatch", state: "dead", summary: "deliver me", task_ids: [taskId] })
    expect(dead.last_error).toMatch(/500/)
    const list = await deadLetters()
    expect(list.counts.dispatch).toBeGreaterThanOrEqual(1)
    expect((await deadLetters("?source=mailbox")).items).toEqual([])

    receiver.mode = { status: 204 }
    const before = receiver.requests.length
    const retried = await server.request(`/api/v1/admin/dead-letters/${dead.id}/retry`, { method: "POST" })
    expect(retried.status).toBe(200)
    expect((await json(retried)).state).toBe("run")
    const task = await waitFor(
      async () => {
        const t = await json(await server.request(`/api/v1/tasks/${taskId}`))
        return t.delivery_status === "delivered" ? t : undefined
      },
      "the retried delivery",
      30_000
    )
    expect(task.delivery_attempts).toBe(1)
    expect(receiver.requests.length).toBe(before + 1)
    await waitFor(
      async () => {
        const again = await server.request(`/api/v1/admin/dead-letters/${dead.id}/retry`, { method: "POST" })
        return again.status === 409 ? true : undefined
      },
      "the item to be no dead letter",
      10_000
    )

    receiver.mode = { status: 500 }
    const other = await deadOf(await inject("give up on me"))
    const discarded = await server.request(`/api/v1/admin/dead-letters/${other.id}/discard`, { method: "POST" })
    expect(discarded.status).toBe(200)
    expect(await json(discarded)).toMatchObject({ state: "discarded", reason: "discarded by a person" })
    expect((await deadLetters()).items.some((item: any) => item.id === other.id)).toBe(false)
    expect((await server.request(`/api/v1/admin/dead-letters/${other.id}/discard`, { method: "POST" })).status).toBe(409)
  })

  it("answers an unknown or malformed id with 404 and a bad filter with 422", async () => {
    expect((await server.request("/api/v1/admin/dead-letters/not-a-uuid/retry", { method: "POST" })).status).toBe(404)
    expect((await server.request(`/api/v1/admin/dead-letters/${crypto.randomUUID()}/discard`, { method: "POST" })).status).toBe(404)
    expect((await server.request("/api/v1/admin/dead-letters?limit=0")).status).toBe(422)
    expect((await server.request("/api/v1/admin/dead-letters?channel_id=nope")).status).toBe(422)
  })
})
