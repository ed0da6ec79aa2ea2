/**
 * `dispatch_type`/`dispatch_config` on a chat that runs at once (not queued): the finished turn is
 * delivered through the dispatcher exactly as a task's result, blocking and streaming, and is
 * recorded as a task whose delivery can be read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "./harness.ts"

describe.each(backends)("dispatch on a chat that runs at once (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await startReceiver({ status: 204 })
    const started = await startWithFakeLlm(backend, "The report is ready.", {
      WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      DISPATCH_RETRY_BASE_MS: "50"
    })
    server = started.server
    llm = started.llm
  })
  afterAll(async () => {
    await receiver?.close()
    await stopWithFakeLlm({ server, llm })
  })

  it("delivers a blocking /chat's answer to its webhook once, and records it as a delivered task", async () => {
    receiver.requests.length = 0
    const response = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({
        message: "Build the report",
        client_id: "compat-dispatch-1",
        dispatch_type: "webhook",
        dispatch_config: { url: `${receiver.url}/done` }
      })
    })
    expect(response.status).toBe(200)
    const { session_id, response: text } = await json(response)
    expect(text).toBe("The report is ready.")
    const [delivered] = await receiver.waitFor(1, 10_000)
    expect(JSON.parse(delivered!.body)).toMatchObject({ status: "complete", result: "The report is ready.", session_id })
    const task = await waitFor(async () => {
      const tasks = await json(await server.request(`/api/v1/tasks?session_id=${session_id}`))
      return tasks.find((t: any) => t.delivery_status === "delivered")
    }, "the recorded task")
    expect(task).toMatchObject({ status: "complete", dispatch_type: "webhook", source: "chat", delivery_attempts: 1 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.requests).toHaveLength(1)
  })

  it("delivers a streamed run's answer too", async () => {
    receiver.requests.length = 0
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({
        message: "Stream it",
        client_id: "compat-dispatch-2",
        dispatch_type: "webhook",
        dispatch_config: { url: receiver.url }
      }),
      signal: controller.signal
    })
    const events = await readSse(response, controller).rest()
    expect(events.at(-1)!.data).toMatchObject({ type: "response", text: "The report is ready." })
    const [delivered] = await receiver.waitFor(1, 10_000)
    expect(JSON.parse(delivered!.body)).toMatchObject({ status: "complete", result: "The report is ready." })
  })

  it("records nothing and delivers nothing without a dispatch_type", async () => {
    receiver.requests.length = 0
    const { session_id } = await json(
      await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "Just talk", client_id: "compat-dispatch-3" }) })
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.requests).toHaveLength(0)
    expect(await json(await server.request(`/api/v1/tasks?session_id=${session_id}`))).toEqual([])
  })
})
