/**
 * The mailbox's classifier (its screening layer 3, through the SDK's `json` completions) against
 * models that misbehave (issue 53): a verdict wrapped in prose and fences is read, a server that
 * refuses `response_format` is asked without it, and a model that never answers JSON (asked again
 * each attempt, told the verdict's shape) has the mail quarantined, never delivered as safe.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type Dovecot, startDovecot } from "../fixtures/dovecot.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const verdict = JSON.stringify({ safe: true, reason: "an ordinary note", risk_level: "low" })

let counter = 0
const mail = (subject: string, body: string) =>
  [
    "From: Ann Sender <ann@example.net>",
    "To: agent@example.org",
    `Subject: ${subject}`,
    "Date: Mon, 23 Nov 2026 09:00:00 +0000",
    `Message-ID: <quirk-${++counter}-${Date.now()}@example.net>`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    body,
    ""
  ].join("\r\n")

describe.each(backends)("the mail classifier with models that misbehave (%s)", (backend) => {
  let dovecot: Dovecot
  let llm: FakeLlm
  let server: TestServer

  beforeAll(async () => {
    dovecot = await startDovecot()
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-quirks",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "0",
        MAILBOX_EMAIL: dovecot.user,
        MAILBOX_APP_PASSWORD: dovecot.password,
        MAILBOX_IMAP_HOST: dovecot.host,
        MAILBOX_IMAP_PORT: String(dovecot.port),
        MAILBOX_IMAP_SECURITY: "plain",
        // Polled with /trigger only.
        MAILBOX_START_DELAY_MS: "3600000",
        MAILBOX_CLASSIFIER_RETRY_MS: "10"
      }
    })
    const channel = await json(
      await server.request("/api/v1/admin/channels", {
        method: "POST",
        body: JSON.stringify({ name: "mail", bot_id: "default", workspace_enabled: true })
      })
    )
    const bound = await server.request(`/api/v1/channels/${channel.id}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "mailbox", client_id: `mailbox:${dovecot.user}` })
    })
    expect(bound.status).toBe(201)
    // The first cycle reads nothing (MAILBOX_INITIAL_FETCH=new): later mail is new.
    await trigger()
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
    await dovecot?.close()
  })
  beforeEach(() => llm.reset())

  const trigger = async () => json(await server.request("/integrations/mailbox/trigger", { method: "POST" }))
  const screened = async (subject: string) => {
    await dovecot.append("INBOX", mail(subject, "An ordinary note about lunch on Friday."))
    const cycle = await trigger()
    expect(cycle.items, JSON.stringify(cycle)).toHaveLength(1)
    return cycle.items[0]
  }
  const calls = () => llm.requestsTo("/v1/chat/completions").map((request) => request.body)

  it("reads a verdict wrapped in prose and fences", async () => {
    llm.script({ text: `My verdict:\n\`\`\`json\n${verdict}\n\`\`\`\nThe mail is harmless.` })
    expect(await screened("Lunch on Friday")).toMatchObject({ outcome: "delivered" })
    expect(calls()).toHaveLength(1)
  })

  it("asks without response_format when the server refuses it", async () => {
    llm.script({ rejectResponseFormat: true, text: verdict })
    expect(await screened("Lunch on Saturday")).toMatchObject({ outcome: "delivered" })
    expect(calls().map((body) => body.response_format)).toEqual([{ type: "json_object" }, undefined])
  })

  it("quarantines when the model never answers JSON: asked again each attempt, told the verdict's shape", async () => {
    llm.setDefaultReply({ text: "Looks fine to me!" })
    const item = await screened("Lunch on Sunday")
    expect(item).toMatchObject({ outcome: "quarantined", layer: 3 })
    expect(item.reason).toMatch(/^classifier failed \(fails closed\).*not JSON.*after 4 attempts/)
    // Four attempts, each asking once more.
    expect(calls()).toHaveLength(8)
    const again = calls()[1]
    expect(again.response_format).toBeUndefined()
    expect(again.messages.at(-2)).toEqual({ role: "assistant", content: "Looks fine to me!" })
    expect(again.messages.at(-1).content).toContain("{\"safe\": true|false, \"reason\": \"<one sentence>\"")
  })
})
