/**
 * A mail's dead letter, retried (issue 56), against a real Dovecot on both databases: a mail that
 * cannot be delivered (a file `data/INBOX` stands where its folder goes) fails its one attempt
 * (INBOUND_MAX_ATTEMPTS=1) and is a dead letter; once the cause is fixed, a person's retry hands it
 * back to the mailbox at once (`cairn.inbound.onRetry`: a poll cycle reads it again by its UID),
 * with the poller itself kept out of the way, and it is delivered once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Dovecot, startDovecot } from "../fixtures/dovecot.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const safe = { text: "{\"safe\": true, \"reason\": \"an ordinary mail\", \"risk_level\": \"low\"}" }

const mail = (subject: string) =>
  [
    "From: Ann Sender <ann@example.net>",
    "To: agent@example.org",
    `Subject: ${subject}`,
    "Date: Mon, 23 Nov 2026 09:00:00 +0000",
    `Message-ID: <retry-${Date.now()}@example.net>`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "A mail that waits for its channel's workspace.",
    ""
  ].join("\r\n")

describe.each(backends)("a retried dead mail (%s)", (backend) => {
  let dovecot: Dovecot
  let llm: FakeLlm
  let server: TestServer
  let channel = ""

  beforeAll(async () => {
    dovecot = await startDovecot({ tls: true })
    llm = await startFakeLlm({ defaultReply: safe })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "0",
        INBOUND_MAX_ATTEMPTS: "1",
        MAILBOX_EMAIL: dovecot.user,
        MAILBOX_APP_PASSWORD: dovecot.password,
        MAILBOX_IMAP_HOST: dovecot.host,
        MAILBOX_IMAP_PORT: String(dovecot.port),
        MAILBOX_IMAP_SECURITY: "plain",
        // The poller stays out of the way: the test polls with /trigger, and the retry must need none.
        MAILBOX_START_DELAY_MS: "3600000"
      }
    })
    channel = (await json(
      await server.request("/api/v1/admin/channels", {
        method: "POST",
        body: JSON.stringify({ name: "mail", bot_id: "default", workspace_enabled: true })
      })
    )).id
    const bound = await server.request(`/api/v1/channels/${channel}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "mailbox", client_id: `mailbox:${dovecot.user}` })
    })
    expect(bound.status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
    await dovecot?.close()
  })

  const trigger = async () => json(await server.request("/integrations/mailbox/trigger", { method: "POST" }))
  const files = async () => {
    const listing = await json(await server.request(`/api/v1/channels/${channel}/workspace/files`))
    return (listing.files as Array<{ path: string }>).map((f) => f.path).filter((p) => p.startsWith("data/INBOX/"))
  }

  it("is delivered once, at once, when a person retries it", async () => {
    // The first cycle only places the cursor (MAILBOX_INITIAL_FETCH=new).
    await trigger()
    const blocker = `/api/v1/channels/${channel}/workspace/files/data/INBOX`
    expect((await server.request(blocker, { method: "PUT", body: JSON.stringify({ content: "in the way" }) })).status).toBeLessThan(300)
    await dovecot.append("INBOX", mail("Waiting for a workspace"))
    const failed = await trigger()
    expect(failed.counts.errors).toBeGreaterThanOrEqual(1)
    const dead = await waitFor(async () => {
      const list = await json(await server.request("/api/v1/admin/dead-letters?source=mailbox"))
      return (list.items as Array<any>)[0]
    }, "the mail in the dead-letter queue")
    expect(dead).toMatchObject({ source: "mailbox", state: "dead", reason: "attempts exhausted" })
    expect(dead.last_error).toMatch(/a parent of the path/)
    // The next cycle is past it: a dead letter is not tried again by itself.
    expect((await trigger()).counts).toMatchObject({ fetched: 0, errors: 0 })

    expect((await server.request(blocker, { method: "DELETE" })).status).toBeLessThan(300)
    const retried = await server.request(`/api/v1/admin/dead-letters/${dead.id}/retry`, { method: "POST" })
    expect(retried.status).toBe(200)
    expect((await json(retried)).state).toBe("received")
    await waitFor(async () => ((await files()).length > 0 ? true : undefined), "the retried mail's file")
    expect(await files()).toEqual(["data/INBOX/2026-11-23-waiting-for-a-workspace.md"])
    expect((await trigger()).counts).toMatchObject({ fetched: 0, passed: 0 })
    expect(await files()).toHaveLength(1)
  })
})
