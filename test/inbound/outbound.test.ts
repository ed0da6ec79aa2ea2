/**
 * Outbound sends are idempotent (issue 56, item 2), on both databases, against loopback peers: a
 * send whose answer was lost (a timeout or a 5xx after the peer acted) is checked before it is
 * retried, a retry never shows twice, and a send whose outcome cannot be known is recorded
 * `uncertain` and not repeated.
 * - webhook: every POST of one delivery carries the same `Idempotency-Key`;
 * - Slack: each post carries a `client_msg_id`; after a lost answer the channel is read for it;
 * - the bridge: after a failed send the chat is queried for its tempGuid; no query possible is uncertain.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeChatServer, startFakeChatServer } from "../fixtures/chatServer.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type FakeSlack, startFakeSlack } from "../fixtures/fakeSlack.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { sleep } from "../support/time.ts"

const SLACK_TOKEN = "xoxb-test-token-outbound-0123"
const TOKEN = "webhook-token-outbound-0123"
const REPLY = "The answer, once"

describe.each(backends)("idempotent outbound sends (%s)", (backend) => {
  let llm: FakeLlm
  let slack: FakeSlack
  let chat: FakeChatServer
  let receiver: WebhookReceiver
  let server: TestServer
  let counter = 0

  const newSession = async () =>
    (await json(
      await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: `outbound-${++counter}` }) })
    )).session_id as string
  const inject = async (body: Record<string, unknown>) => {
    const response = await server.request(`/api/v1/sessions/${await newSession()}/messages`, {
      method: "POST",
      body: JSON.stringify({ source: "test", run_agent: true, notify: true, content: "go", ...body })
    })
    expect(response.status).toBe(200)
    return (await json(response)).task_id as string
  }
  const settled = (taskId: string) =>
    waitFor(
      async () => {
        const task = await json(await server.request(`/api/v1/tasks/${taskId}`))
        return task.delivery_status !== "pending" && task.delivery_status !== "none" ? task : undefined
      },
      `the delivery of task ${taskId} to settle`,
      30_000
    )

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: REPLY } })
    slack = await startFakeSlack([SLACK_TOKEN])
    chat = await startFakeChatServer()
    receiver = await startReceiver({ status: 204 })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "0",
        TASK_POLL_MS: "50",
        SLACK_API_BASE_URL: slack.url,
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        DISPATCH_MAX_ATTEMPTS: "3",
        DISPATCH_RETRY_BASE_MS: "100",
        WEBHOOK_TIMEOUT_MS: "2000"
      }
    })
    const saved = await server.request("/api/v1/admin/integrations/msgbridge/settings", {
      method: "PUT",
      body: JSON.stringify({
        MSGBRIDGE_SERVER_URL: chat.url,
        MSGBRIDGE_PASSWORD: chat.password,
        MSGBRIDGE_WEBHOOK_TOKEN: TOKEN,
        MSGBRIDGE_LEGACY_CLIENT: "false",
        MSGBRIDGE_SEND_TIMEOUT_MS: "5000"
      })
    })
    expect(saved.status).toBe(200)
  })
  afterAll(async () => {
    await server?.close()
    await Promise.all([llm?.close(), slack?.close(), chat?.close(), receiver?.close()])
  })
  beforeEach(() => {
    receiver.requests.length = 0
    receiver.mode = { status: 204 }
    slack.historyDown = false
    chat.setDown(false)
  })

  it("webhook: every attempt of one delivery carries the same Idempotency-Key, another delivery another", async () => {
    receiver.mode = { statuses: [500, 500, 200] }
    const first = await inject({ dispatch_type: "webhook", dispatch_config: { url: `${receiver.url}/hook` } })
    expect(await settled(first)).toMatchObject({ delivery_status: "delivered", delivery_attempts: 3 })
    const keys = receiver.requests.map((r) => r.headers["idempotency-key"])
    expect(keys).toEqual([`task:${first}`, `task:${first}`, `task:${first}`])

    receiver.requests.length = 0
    const second = await inject({ dispatch_type: "webhook", dispatch_config: { url: `${receiver.url}/hook` } })
    expect(await settled(second)).toMatchObject({ delivery_status: "delivered", delivery_attempts: 1 })
    expect(receiver.requests.map((r) => r.headers["idempotency-key"])).toEqual([`task:${second}`])
  })

  it("Slack: a post whose answer was lost is found by its client_msg_id and not posted again", async () => {
    const before = slack.posts.length
    slack.failNextAfterPosting(1, 502)
    const taskId = await inject({ dispatch_type: "chatplatform", dispatch_config: { channel_id: "C0LOST", token: SLACK_TOKEN } })
    expect(await settled(taskId)).toMatchObject({ delivery_status: "delivered", delivery_attempts: 1, delivery_error: null })
    const posts = slack.posts.slice(before)
    expect(posts).toHaveLength(1)
    expect(posts[0]!.body.client_msg_id).toBe(taskId)
  })

  it("Slack: a lost answer whose post cannot be looked for is uncertain and never repeated; a refused one is retried", async () => {
    const before = slack.posts.length
    slack.failNextAfterPosting(1, 500)
    slack.historyDown = true
    const taskId = await inject({ dispatch_type: "chatplatform", dispatch_config: { channel_id: "C0UNSURE", token: SLACK_TOKEN } })
    const task = await settled(taskId)
    expect(task).toMatchObject({ status: "complete", delivery_status: "uncertain", delivery_attempts: 1 })
    expect(task.delivery_error).toMatch(/could not be checked/)
    await sleep(500)
    expect(slack.posts.slice(before)).toHaveLength(1)

    // Slack's own refusal (ok: false) posted nothing: retried with the same id, shown once.
    const refused = slack.posts.length
    slack.failNext(1, "ratelimited")
    const retried = await inject({ dispatch_type: "chatplatform", dispatch_config: { channel_id: "C0RETRY", token: SLACK_TOKEN } })
    expect(await settled(retried)).toMatchObject({ delivery_status: "delivered", delivery_attempts: 2 })
    const attempts = slack.posts.slice(refused)
    expect(attempts.map((p) => p.body.client_msg_id)).toEqual([retried, retried])
    expect(attempts.filter((p) => p.ts !== undefined)).toHaveLength(1)
  })

  it("the bridge: a send that failed while the chat server cannot be asked is uncertain, sent once", async () => {
    const chatGuid = "iMessage;-;+15557001"
    const channel = await json(
      await server.request("/api/v1/admin/channels", {
        method: "POST",
        body: JSON.stringify({ name: "uncertain", bot_id: "default", require_mention: false })
      })
    )
    const bound = await server.request(`/api/v1/channels/${channel.id}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "msgbridge", client_id: `msgbridge:${chatGuid}` })
    })
    expect(bound.status).toBe(201)
    // The send hangs and then answers 500 although it was delivered; meanwhile the server goes down,
    // so no query can tell whether it arrived.
    chat.failNextSends(1, { hangMs: 1500, deliver: true })
    const arrived = chat.nextSend(chatGuid).then(() => chat.setDown(true))
    const answer = await chat.webhook(
      `${server.baseUrl}/integrations/msgbridge/webhook?token=${TOKEN}`,
      "new-message",
      chat.receive({ chatGuid, text: "are you sure?" })
    )
    expect(answer.body).toMatchObject({ status: "triggered" })
    await arrived
    const taskId = answer.body.channels[0].task_id as string
    const task = await settled(taskId)
    expect(task).toMatchObject({ delivery_status: "uncertain", delivery_attempts: 1 })
    expect(task.delivery_error).toMatch(/could not be asked/)
    chat.setDown(false)
    await sleep(500)
    expect(chat.sends().filter((s) => s.chatGuid === chatGuid)).toHaveLength(1)
  })
})
