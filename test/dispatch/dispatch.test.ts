/**
 * Result delivery against loopback peers: Slack (a fake Web API), a webhook receiver, an internal
 * session, a custom dispatcher registered through the registry; retries, refusals and failures are
 * recorded on the task and never fail it.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { DispatcherContractError, Dispatchers, type DispatchTask } from "../../src/tasks/delivery/index.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type FakeSlack, startFakeSlack } from "../fixtures/fakeSlack.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const SLACK_TOKEN = "xoxb-test-token-0123456789"

describe.each(backends)("dispatch (%s)", (backend) => {
  let llm: FakeLlm
  let slack: FakeSlack
  let receiver: WebhookReceiver
  let server: TestServer
  let counter = 0

  const newSession = async (body: Record<string, unknown> = {}) =>
    (
      await json(
        await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: `dispatch-${++counter}`, ...body }) })
      )
    ).session_id as string
  const inject = async (sessionId: string, body: Record<string, unknown>) => {
    const response = await server.request(`/api/v1/sessions/${sessionId}/messages`, {
      method: "POST",
      body: JSON.stringify({ source: "test", run_agent: true, notify: true, ...body })
    })
    expect(response.status).toBe(200)
    return json(response)
  }
  const until = async <A>(read: () => Promise<A>, done: (value: A) => boolean, timeoutMs = 20_000): Promise<A> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = await read()
      if (done(value)) return value
      if (Date.now() > deadline) throw new Error(`condition not met; last: ${JSON.stringify(value)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const task = (id: string) => server.request(`/api/v1/tasks/${id}`).then(json)
  const delivered = (id: string) =>
    until(() => task(id), (t) => t.delivery_status !== "pending" && t.status !== "pending" && t.status !== "running")

  beforeAll(async () => {
    llm = await startFakeLlm()
    slack = await startFakeSlack([SLACK_TOKEN])
    receiver = await startReceiver({ status: 204 })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "1",
        TASK_POLL_MS: "50",
        SLACK_API_BASE_URL: slack.url,
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        DISPATCH_MAX_ATTEMPTS: "3",
        DISPATCH_RETRY_BASE_MS: "100",
        WEBHOOK_TIMEOUT_MS: "2000"
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await Promise.all([llm?.close(), slack?.close(), receiver?.close()])
  })
  beforeEach(() => {
    llm.reset()
    receiver.requests.length = 0
    receiver.mode = { status: 204 }
  })

  it("chatplatform: posts the result to Slack in the thread, and never shows the token", async () => {
    llm.script({ text: "PR #7 looks good" })
    const before = slack.posts.length
    const sessionId = await newSession()
    const { task_id } = await inject(sessionId, {
      content: "Review PR #7",
      dispatch_type: "chatplatform",
      dispatch_config: { channel_id: "C0123", token: SLACK_TOKEN, thread_ts: "1699999999.000100", reply_in_thread: true }
    })
    const done = await delivered(task_id)
    expect(done).toMatchObject({ status: "complete", delivery_status: "delivered", delivery_attempts: 1, delivery_error: null })
    expect(done.dispatch_config).toEqual({ channel_id: "C0123", token: "****", thread_ts: "1699999999.000100", reply_in_thread: true })
    const post = slack.posts[before]!
    expect(post).toMatchObject({ token: SLACK_TOKEN, channel: "C0123", text: "PR #7 looks good", thread_ts: "1699999999.000100" })
    expect(JSON.stringify(await json(await server.request(`/api/v1/tasks?session_id=${sessionId}`)))).not.toContain(SLACK_TOKEN)
  })

  it("chatplatform: reply_in_thread false posts to the channel; Slack errors are retried and recorded", async () => {
    const sessionId = await newSession()
    const before = slack.posts.length
    slack.failNext(1, "ratelimited")
    const { task_id } = await inject(sessionId, {
      content: "Status?",
      dispatch_type: "chatplatform",
      dispatch_config: { channel_id: "C0456", token: SLACK_TOKEN, thread_ts: "1699999999.000200", reply_in_thread: false }
    })
    const done = await delivered(task_id)
    expect(done).toMatchObject({ status: "complete", delivery_status: "delivered", delivery_attempts: 2 })
    // The error of the failed attempt stays readable until the next attempt replaces it.
    const posts = slack.posts.slice(before)
    expect(posts).toHaveLength(2)
    for (const post of posts) expect(post).toMatchObject({ channel: "C0456", thread_ts: undefined })

    const badToken = await inject(sessionId, {
      content: "again",
      dispatch_type: "chatplatform",
      dispatch_config: { channel_id: "C0456", token: "xoxb-wrong-token-000000" }
    })
    const failed = await delivered(badToken.task_id)
    expect(failed).toMatchObject({ status: "complete", delivery_status: "failed", delivery_attempts: 3 })
    expect(failed.delivery_error).toContain("invalid_auth")
    expect(failed.delivery_error).not.toContain("xoxb-wrong")
  })

  it("webhook: POSTs {task_id, session_id, status, result, client_actions}, retrying with backoff", async () => {
    llm.script({ text: "Nightly report ready" })
    receiver.mode = { statuses: [503, 503, 200] }
    const sessionId = await newSession()
    const { task_id } = await inject(sessionId, {
      content: "Build the report",
      dispatch_type: "webhook",
      dispatch_config: { url: `${receiver.url}/hook` }
    })
    const done = await delivered(task_id)
    expect(done).toMatchObject({ status: "complete", delivery_status: "delivered", delivery_attempts: 3, delivery_error: null })
    expect(receiver.requests).toHaveLength(3)
    const gaps = receiver.requests.slice(1).map((r, i) => r.receivedAt - receiver.requests[i]!.receivedAt)
    // Lower bounds only (load can stretch a wait, never shorten it): 100 ms, then doubled.
    expect(gaps[0]!).toBeGreaterThanOrEqual(95)
    expect(gaps[1]!).toBeGreaterThanOrEqual(195)
    const last = receiver.requests[2]!
    expect(last).toMatchObject({ method: "POST", url: "/hook" })
    expect(last.headers["content-type"]).toBe("application/json")
    expect(JSON.parse(last.body)).toMatchObject({
      task_id,
      session_id: sessionId,
      status: "complete",
      result: "Nightly report ready",
      client_actions: []
    })
  })

  it("webhook: a failed task is delivered with its status; an exhausted delivery never fails the task", async () => {
    const sessionId = await newSession()
    const failing = await inject(sessionId, {
      content: "go",
      dispatch_type: "webhook",
      dispatch_config: { url: receiver.url },
      execution_config: { skills: ["no-such-skill"] }
    })
    await delivered(failing.task_id)
    const payload = JSON.parse(receiver.requests[0]!.body)
    expect(payload).toMatchObject({ task_id: failing.task_id, status: "failed", result: null })
    expect(payload.error).toContain("Unknown skill")

    receiver.requests.length = 0
    receiver.mode = { status: 500 }
    const exhausted = await inject(sessionId, { content: "go again", dispatch_type: "webhook", dispatch_config: { url: receiver.url } })
    const done = await delivered(exhausted.task_id)
    expect(done).toMatchObject({ status: "complete", result: "ok", delivery_status: "failed", delivery_attempts: 3 })
    expect(done.delivery_error).toContain("500")
    expect(receiver.requests).toHaveLength(3)
  })

  it("webhook: refuses private and loopback targets that WEBHOOK_ALLOWED_HOSTS does not allow", async () => {
    const sessionId = await newSession()
    for (const url of ["http://127.0.0.2:9/hook", "http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data", "http://[::1]:9/"]) {
      const { task_id } = await inject(sessionId, { content: `to ${url}`, dispatch_type: "webhook", dispatch_config: { url } })
      const done = await delivered(task_id)
      expect(done.status).toBe("complete")
      expect(done.delivery_status).toBe("failed")
      expect(done.delivery_error).toMatch(/private or loopback/)
      expect(done.delivery_attempts).toBe(1)
    }
  })

  it("internal: the result lands as a user message in the target session, without a run unless asked", async () => {
    llm.script({ text: "Summary: all good" })
    const source = await newSession()
    const target = await newSession()
    const { task_id } = await inject(source, { content: "Summarise", dispatch_type: "internal", dispatch_config: { session_id: target } })
    await delivered(task_id)
    const messages = await json(await server.request(`/api/v1/sessions/${target}/messages`))
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({
      role: "user",
      content: "Summary: all good",
      metadata: { injected: true, source: `task:${task_id}`, task_id, from_session_id: source }
    })
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)

    // With run_agent in the config the target session answers it.
    llm.script({ text: "first answer" }, { text: "second answer" })
    const chained = await inject(source, {
      content: "Again",
      dispatch_type: "internal",
      dispatch_config: { session_id: target, run_agent: true }
    })
    await delivered(chained.task_id)
    const answered = await until(
      () => server.request(`/api/v1/sessions/${target}/messages`).then(json),
      (list: Array<{ role: string; content: string }>) => list.at(-1)?.role === "assistant"
    )
    expect(answered.slice(-2).map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "first answer"],
      ["assistant", "second answer"]
    ])
  })

  it("notify uses the session's dispatch_config when the request names no dispatcher; notify false delivers nothing", async () => {
    const sessionId = await newSession({ dispatch_config: { dispatch_type: "webhook", url: `${receiver.url}/session-default` } })
    const notified = await inject(sessionId, { content: "ping" })
    const done = await delivered(notified.task_id)
    expect(done).toMatchObject({ dispatch_type: "webhook", delivery_status: "delivered" })
    expect(receiver.requests.map((r) => r.url)).toEqual(["/session-default"])
    const quiet = await inject(sessionId, { content: "pong", notify: false })
    expect(await delivered(quiet.task_id)).toMatchObject({ dispatch_type: "none", delivery_status: "none", delivery_attempts: 0 })
    expect(receiver.requests).toHaveLength(1)
  })

  it("a custom dispatcher registered through the registry gets deliver(task, result, clientActions, extraMetadata)", async () => {
    const calls: Array<{ task: DispatchTask; result: string; clientActions: unknown; extraMetadata: unknown }> = []
    const posts: Array<{ config: unknown; text: string; extra: unknown }> = []
    await server.run(
      Effect.flatMap(Dispatchers, (registry) =>
        registry.register("pigeon", {
          deliver: async (task: DispatchTask, result: string, clientActions: unknown, extraMetadata: unknown) => {
            calls.push({ task, result, clientActions, extraMetadata })
          },
          postMessage: async (config: Record<string, unknown>, text: string, { extraMetadata }: { extraMetadata?: unknown }) => {
            posts.push({ config, text, extra: extraMetadata })
            return true
          }
        }))
    )
    llm.script({ text: "Coo" })
    const sessionId = await newSession()
    const { task_id } = await inject(sessionId, {
      content: "Send it",
      dispatch_type: "pigeon",
      dispatch_config: { loft: "north", secret: "s3cret-value" }
    })
    expect(await delivered(task_id)).toMatchObject({ delivery_status: "delivered", dispatch_config: { loft: "north", secret: "****" } })
    expect(calls).toHaveLength(1)
    expect(calls[0]!.result).toBe("Coo")
    expect(calls[0]!.task).toMatchObject({
      id: task_id,
      status: "complete",
      session_id: sessionId,
      dispatch_config: { loft: "north", secret: "s3cret-value" }
    })
    expect(calls[0]!.clientActions).toBeNull()
    expect(calls[0]!.extraMetadata).toEqual({ source: "test" })

    const posted = await server.run(
      Effect.flatMap(
        Dispatchers,
        (registry) => registry.postMessage("pigeon", { loft: "south" }, "heartbeat", { botId: "default", extraMetadata: { beat: 1 } })
      )
    )
    expect(posted).toBe(true)
    expect(posts).toEqual([{ config: { loft: "south" }, text: "heartbeat", extra: { beat: 1 } }])
  })

  it("registration rejects a dispatcher whose operations lack extraMetadata, and registers nothing", async () => {
    const attempt = await server.run(
      Effect.flatMap(Dispatchers, (registry) =>
        Effect.either(
          registry.register("legacy", {
            deliver: async (_task: unknown, _result: string, _clientActions: unknown) => {},
            postMessage: async (_config: unknown, _text: string, _options: unknown) => true
          })
        ))
    )
    expect(attempt._tag).toBe("Left")
    const error = (attempt as { left: unknown }).left
    expect(error).toBeInstanceOf(DispatcherContractError)
    expect((error as Error).message).toMatch(/Dispatcher "legacy" rejected: deliver must accept/)
    const sessionId = await newSession()
    const refused = await server.request(`/api/v1/sessions/${sessionId}/messages`, {
      method: "POST",
      body: JSON.stringify({ content: "x", run_agent: true, notify: true, dispatch_type: "legacy" })
    })
    expect(refused.status).toBe(422)
  })
})
