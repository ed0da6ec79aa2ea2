/**
 * Chaos (issue 56, item 6): never lost, never doubled. On both databases, three sources feed one
 * server process at a time: the messaging bridge (the fixture chat server's webhook), the mailbox
 * (a real Dovecot) and a webhook dispatcher (a message put in through the API whose answer is
 * POSTed to a receiver). For each step of the pipeline (docs/operations.md, "Fault injection":
 * after receive, after route, mid-run, after answer, mid-send, after send) a server is started
 * with CAIRN_FAULT_KILL_AT at that step, one item of each source is sent, the server kills itself
 * with SIGKILL when the first item reaches the step, and a server without the switch is started on
 * the same database. Every item must end delivered exactly once or in the dead-letter queue, and
 * no person sees a reply twice; on the send steps the chat server hangs 120 s and then answers 500
 * although it delivered (as BlueBubbles does), far past the bridge's send timeout, and the chat
 * still shows one reply. A table per source is printed: sent, delivered once, dead-lettered, doubled, lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { faultSteps } from "../../src/lifecycle/FaultInjection.ts"
import { type FakeChatServer, startFakeChatServer } from "../fixtures/chatServer.ts"
import { type Dovecot, startDovecot } from "../fixtures/dovecot.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { type ChildServer, json, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled, sleep, waitFor } from "../support/time.ts"

const TOKEN = "chaos-webhook-token-0123"
const safe = { text: "{\"safe\": true, \"reason\": \"an ordinary mail\", \"risk_level\": \"low\"}", delayMs: 400 }
const chatOf = (step: string) => `iMessage;-;+1555${String(faultSteps.indexOf(step as never) + 100).padStart(6, "0")}`

const mail = (step: string, user: string) =>
  [
    "From: Ann Sender <ann@example.net>",
    `To: ${user}`,
    `Subject: Chaos ${step}`,
    "Date: Mon, 23 Nov 2026 09:00:00 +0000",
    `Message-ID: <chaos-${step}-${Date.now()}@example.net>`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    `A mail sent while the server dies ${step}.`,
    ""
  ].join("\r\n")

/** Resolves true once the child process has ended (at once when it has). */
const exited = (server: ChildServer) =>
  server.process.exitCode !== null || server.process.signalCode !== null
    ? Promise.resolve(true)
    : new Promise<boolean>((resolve) => server.process.once("exit", () => resolve(true)))

interface Tally {
  sent: number
  once: number
  dead: number
  doubled: number
  lost: number
}

describe.each(backends)("chaos: kill -9 at each step of the inbound pipeline (%s)", (backend) => {
  let llm: FakeLlm
  let chat: FakeChatServer
  let receiver: WebhookReceiver
  let dovecot: Dovecot
  let db: TestDatabase
  let mailChannel = ""
  const env = () => ({
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-test-fake-key-1234567890",
    DEFAULT_MODEL: "fake-model",
    LLM_MAX_RETRIES: "0",
    TASK_POLL_MS: "100",
    TASK_LEASE_SECONDS: "6",
    WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
    DISPATCH_RETRY_BASE_MS: "200",
    MSGBRIDGE_SERVER_URL: chat.url,
    MSGBRIDGE_PASSWORD: chat.password,
    MSGBRIDGE_WEBHOOK_TOKEN: TOKEN,
    MSGBRIDGE_LEGACY_CLIENT: "false",
    MSGBRIDGE_SEND_TIMEOUT_MS: "1000",
    MSGBRIDGE_HEALTH_INTERVAL_SECONDS: "1",
    MAILBOX_EMAIL: dovecot.user,
    MAILBOX_APP_PASSWORD: dovecot.password,
    MAILBOX_IMAP_HOST: dovecot.host,
    MAILBOX_IMAP_PORT: String(dovecot.port),
    MAILBOX_IMAP_SECURITY: "plain",
    MAILBOX_INITIAL_FETCH: "all",
    MAILBOX_START_DELAY_MS: "0",
    MAILBOX_POLL_INTERVAL: "1"
  })

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: safe })
    chat = await startFakeChatServer()
    receiver = await startReceiver({ status: 204 })
    dovecot = await startDovecot()
    db = await createTestDatabase(backend)
    // Channels and bindings first, with the mailbox off (its poller would start at once).
    const setup = await spawnServer(db, { ...env(), MAILBOX_EMAIL: "" })
    try {
      for (const step of faultSteps) {
        const channel = await json(
          await setup.request("/api/v1/admin/channels", {
            method: "POST",
            body: JSON.stringify({ name: `bridge-${step}`, bot_id: "default", require_mention: false })
          })
        )
        await setup.request(`/api/v1/channels/${channel.id}/integrations`, {
          method: "POST",
          body: JSON.stringify({ integration_type: "msgbridge", client_id: `msgbridge:${chatOf(step)}` })
        })
      }
      const channel = await json(
        await setup.request("/api/v1/admin/channels", {
          method: "POST",
          body: JSON.stringify({ name: "mail", bot_id: "default", workspace_enabled: true })
        })
      )
      mailChannel = channel.id
      await setup.request(`/api/v1/channels/${channel.id}/integrations`, {
        method: "POST",
        body: JSON.stringify({ integration_type: "mailbox", client_id: `mailbox:${dovecot.user}` })
      })
    } finally {
      await setup.stop()
    }
  }, spawnDeadlineMs + scaled(60_000))

  afterAll(async () => {
    await llm?.close()
    await chat?.close()
    await receiver?.close()
    await dovecot?.close()
    await db?.drop()
  })

  it("every item ends delivered exactly once or dead-lettered; nobody sees a reply twice", async () => {
    const items: Array<{ step: string; guid: string; taskId: string }> = []
    for (const step of faultSteps) {
      // BlueBubbles' real hang: 120 s, then a 500 although it sent. It costs no wall time: the bridge gives
      // up after MSGBRIDGE_SEND_TIMEOUT_MS (1 s), asks the chat before sending again, and the hang runs on
      // beside the next steps (the fixture ends it when it closes).
      if (step === "mid-send" || step === "after-send") chat.failNextSends(1, { hangMs: 120_000, deliver: true })
      const doomed = await spawnServer(db, {
        ...env(),
        CAIRN_FAULT_KILL_AT: step,
        CAIRN_FAULT_KILL_MATCH: step,
        CAIRN_FAULT_KILL_DELAY_MS: "300"
      })
      // The webhook dispatcher's item: acknowledged (its task id) before anything else is sent.
      const session = (await json(
        await doomed.request("/api/v1/sessions", {
          method: "POST",
          body: JSON.stringify({ client_id: `chaos-${step}` })
        })
      )).session_id as string
      const injected = await json(
        await doomed.request(`/api/v1/sessions/${session}/messages`, {
          method: "POST",
          body: JSON.stringify({
            content: `chaos ${step}`,
            run_agent: true,
            notify: true,
            dispatch_type: "webhook",
            dispatch_config: { url: receiver.url }
          })
        })
      )
      await dovecot.append("INBOX", mail(step, dovecot.user))
      const message = chat.receive({ chatGuid: chatOf(step), text: `hello, this is ${step}` })
      items.push({ step, guid: message.guid, taskId: injected.task_id })
      // The webhook's answer may never come (the process died under it): the ledger has it, or the catch-up finds it.
      await chat.webhook(`${doomed.baseUrl}/integrations/msgbridge/webhook?token=${TOKEN}`, "new-message", message).catch(() => undefined)
      const died = await Promise.race([exited(doomed), sleep(scaled(20_000)).then(() => false)])
      if (!died) await doomed.stop("SIGKILL")
      console.log(`chaos (${backend}): ${step}: ${died ? "the server killed itself" : "not reached in time, killed"}`)
      const next = await spawnServer(db, env())
      try {
        await waitFor(async () => ((await settledAll(next, items)) ? true : undefined), `every item after the kill ${step}`, scaled(60_000))
      } catch (error) {
        console.log(`chaos (${backend}): the server after ${step} said:\n${next.output().slice(-6000)}`)
        throw error
      } finally {
        await next.stop()
      }
    }
    const last = await spawnServer(db, env())
    try {
      await sleep(2_000)
      const tallies = await tally(last, items)
      console.log(`\nChaos (${backend}): a kill -9 at each of ${faultSteps.join(", ")}\n` + table(tallies))
      for (const source of Object.keys(tallies)) {
        expect(tallies[source]!.doubled, `${source} doubled`).toBe(0)
        expect(tallies[source]!.lost, `${source} lost`).toBe(0)
        expect(tallies[source]!.once + tallies[source]!.dead, `${source} settled`).toBe(tallies[source]!.sent)
      }
    } finally {
      await last.stop()
    }
  }, scaled(900_000))

  /** What the person sees of each item, by source. */
  const seen = async (server: ChildServer, items: ReadonlyArray<{ step: string; guid: string; taskId: string }>) => {
    const files = ((await json(await server.request(`/api/v1/channels/${mailChannel}/workspace/files`))).files as Array<{ path: string }>)
      .map((f) => f.path)
    const dead = (await json(await server.request("/api/v1/admin/dead-letters?limit=500"))).items as Array<
      { source: string; external_id: string }
    >
    const deadIds = new Set(dead.map((d) => `${d.source}:${d.external_id}`))
    return items.map((item) => ({
      msgbridge: {
        shown: chat.messages().filter((m) => m.isFromMe === true && m.chats[0]?.guid === chatOf(item.step)).length,
        dead: deadIds.has(`msgbridge:${item.guid}`)
      },
      mailbox: {
        shown: files.filter((p) => p.startsWith(`data/INBOX/2026-11-23-chaos-${item.step}`)).length,
        dead: [...deadIds].some((id) => id.startsWith("mailbox:<chaos-" + item.step))
      },
      webhook: {
        shown: new Set(
          receiver.requests.filter((r) => r.headers["idempotency-key"] === `task:${item.taskId}`).map((r) => r.headers["idempotency-key"])
        ).size,
        dead: deadIds.has(`dispatch:${item.taskId}`)
      }
    }))
  }

  const settledAll = async (server: ChildServer, items: ReadonlyArray<{ step: string; guid: string; taskId: string }>) =>
    (await seen(server, items)).every((views) => Object.values(views).every((view) => view.shown >= 1 || view.dead))

  const tally = async (server: ChildServer, items: ReadonlyArray<{ step: string; guid: string; taskId: string }>) => {
    const tallies: Record<string, Tally> = {}
    for (const views of await seen(server, items)) {
      for (const [source, view] of Object.entries(views)) {
        const t = (tallies[source] ??= { sent: 0, once: 0, dead: 0, doubled: 0, lost: 0 })
        t.sent += 1
        if (view.shown === 1) t.once += 1
        else if (view.shown > 1) t.doubled += 1
        else if (view.dead) t.dead += 1
        else t.lost += 1
      }
    }
    return tallies
  }
})

const table = (tallies: Record<string, Tally>) => {
  const rows = [["source", "sent", "delivered once", "dead-lettered", "doubled", "lost"]]
  for (const [source, t] of Object.entries(tallies)) rows.push([source, ...[t.sent, t.once, t.dead, t.doubled, t.lost].map(String)])
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ")).join("\n")
}
