/**
 * The dead-letter page in Chromium: the counts per source (each a filter), each dead letter with
 * its last error, one-click retry; readable in both themes and at a phone's width, with no serious
 * accessibility violation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startReceiver, type WebhookReceiver } from "../../hooks/webhookReceiver.ts"
import { waitFor } from "../../support/time.ts"
import { screenshot } from "../support.ts"
import { type Console, expectCleanEverywhere, openPage, startConsole } from "./support.ts"

describe("console: dead letters", () => {
  let app: Console
  let receiver: WebhookReceiver
  beforeAll(async () => {
    receiver = await startReceiver({ status: 500 })
    app = await startConsole({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", DISPATCH_MAX_ATTEMPTS: "1", TASK_POLL_MS: "50" } })
    const { server } = app
    const session = (await (await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: "dead" }) }))
      .json()) as { session_id: string }
    await server.request(`/api/v1/sessions/${session.session_id}/messages`, {
      method: "POST",
      body: JSON.stringify({
        content: "a reply nobody took",
        run_agent: true,
        notify: true,
        dispatch_type: "webhook",
        dispatch_config: { url: receiver.url }
      })
    })
    await waitFor(
      async () => {
        const list = (await (await server.request("/api/v1/admin/dead-letters")).json()) as { items: Array<unknown> }
        return list.items.length > 0 ? true : undefined
      },
      "the dead letter",
      30_000
    )
  }, 240_000)
  afterAll(async () => {
    await app?.close()
    await receiver?.close()
  })

  it("lists the dead letters with counts per source and retries one with a click, in both themes and at a phone's width", async () => {
    const { page } = app
    await openPage(page, "Dead letters")
    const sources = page.getByRole("list", { name: "Sources" })
    await sources.getByRole("button", { name: "dispatch (1)" }).waitFor()
    const table = page.getByRole("table", { name: "Dead letters" })
    expect(await table.getByText("a reply nobody took").count()).toBe(1)
    expect(await table.getByText(/500/).count()).toBe(1)
    await screenshot(page, "console-dead-letters")
    await expectCleanEverywhere(page, "dead letters")

    receiver.mode = { status: 204 }
    await table.getByRole("button", { name: /^Retry dispatch item / }).click()
    await page.getByRole("status").filter({ hasText: /Retried dispatch item/ }).waitFor()
    await receiver.waitFor(2, 30_000)
    await page.getByText("No dead letters: every inbound item was delivered, settled or is still moving.").waitFor({ timeout: 30_000 })
  })
})
