/**
 * The console's Integrations page in a real Chromium against a real Cairn (PGlite): each
 * integration's status and why, the example's settings form with a secret (after saving, the secret
 * is in neither the page nor any response the page received), the integrations' sidebar sections
 * with their icons and readiness dots (the messaging bridge's is red: its own diagnosis says it is
 * not ready, having no chat server configured), a sidebar item's answer shown in the page, and the
 * bridge's webhook URL copied as an absolute URL.
 */
import * as fs from "node:fs"
import type { Response } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "../../support/database.ts"
import { writeIntegration } from "../../support/integrations.ts"
import { json } from "../../support/server.ts"
import { scaled } from "../../support/time.ts"
import { screenshot } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

const SECRET = "tok-console-secret-7f3a9c41"

describe("console: integrations", () => {
  let c: Console
  /** An integration that fails to load (its route's handler is no function), beside the project's. */
  const extraDir = tempDir("cairn-console-integrations-")
  /** Every response the page received, with its body, as it arrived. */
  const responses: Array<Promise<{ url: string; body: string }>> = []

  beforeAll(async () => {
    writeIntegration(extraDir, "broken", { "router.ts": "export default [{ method: 'GET', path: '/x', handler: 'not a function' }]\n" })
    c = await startConsole({ env: { INTEGRATION_DIRS: extraDir } })
    await c.page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: c.server.baseUrl })
    c.page.on("response", (response: Response) => {
      responses.push(
        response.body().then((body) => ({ url: response.url(), body: body.toString("utf8") }), () => ({ url: response.url(), body: "" }))
      )
    })
  }, scaled(120_000))
  afterAll(async () => {
    await c?.close()
    fs.rmSync(extraDir, { recursive: true, force: true })
  })

  it("lists each integration with its status and why it is not ready", async () => {
    const { page } = c
    await openPage(page, "Integrations")
    const example = page.getByTestId("integration-example")
    await example.getByText("Connected", { exact: true }).waitFor()
    const bridge = page.getByTestId("integration-msgbridge")
    await bridge.getByText("Not configured", { exact: true }).waitFor()
    await bridge.getByText("missing MSGBRIDGE_SERVER_URL, MSGBRIDGE_PASSWORD, MSGBRIDGE_WEBHOOK_TOKEN").waitFor()
    // Not configured is grey: nothing is wrong until someone asks it to work.
    expect(await bridge.locator(".badge").getAttribute("data-state")).toBe("off")
    await example.getByText(/stats-snapshot: running/).waitFor()
    const broken = page.getByTestId("integration-broken")
    await broken.getByText("Failing", { exact: true }).waitFor()
    await broken.getByText(/handler must be a function/).waitFor()
    await screenshot(page, "console-integrations")
  })

  it("shows the integrations' sidebar sections with icons and readiness dots, and an item's answer in the page", async () => {
    const { page } = c
    const nav = page.getByRole("navigation", { name: "Cairn" })
    const example = nav.getByTestId("sidebar-section-example")
    await example.getByRole("heading", { name: /Example/ }).waitFor()
    expect(await example.locator("h2 [data-icon]").getAttribute("data-icon")).toBe("Zap")
    // Its status: its worker runs.
    await example.locator("[data-testid=\"readiness-Example\"][data-state=\"connected\"]").waitFor()
    await example.getByRole("button", { name: /Example/ }).click()
    expect(await example.getByRole("link", { name: "Ping" }).locator("[data-icon]").getAttribute("data-icon")).toBe("Activity")
    // An item without an icon gets Plug.
    expect(await example.getByRole("link", { name: "Stats" }).locator("[data-icon]").getAttribute("data-icon")).toBe("Plug")
    // The bridge has no chat server configured: its dot is grey (not configured), not red.
    const bridge = nav.getByTestId("sidebar-section-msgbridge")
    await bridge.locator("[data-testid=\"readiness-Messages\"][data-state=\"not_configured\"]").waitFor()
    const colour = (dot: unknown) => (globalThis as any).getComputedStyle(dot).backgroundColor as string
    const grey = await bridge.locator(".ready-dot").evaluate(colour)
    const green = await example.locator(".ready-dot").evaluate(colour)
    expect(grey).not.toBe(green)

    await example.getByRole("link", { name: "Ping" }).click()
    await page.waitForURL(/\/admin\/integrations\/example\?item=%2Fintegrations%2Fexample%2Fping$/)
    const answer = page.getByLabel("Answer of /integrations/example/ping")
    await answer.getByText("\"status\": \"ok\"", { exact: false }).waitFor()
    expect(JSON.parse((await answer.textContent())!)).toMatchObject({ status: "ok", integration: "example" })
  })

  it("edits the example's settings; the secret is in neither the page nor any response after saving", async () => {
    const { page } = c
    await openPage(page, "Integrations")
    await page.getByTestId("integration-example").getByRole("link", { name: "Example" }).click()
    await page.getByRole("heading", { level: 1, name: "Example" }).waitFor()
    const form = page.getByRole("form", { name: "Settings" })
    const greeting = form.getByLabel("Greeting")
    // The default shows as the placeholder, with the manifest's description.
    expect(await greeting.getAttribute("placeholder")).toBe("Hello (default)")
    await form.getByText("How the ping route greets").waitFor()
    const token = form.getByLabel("API token")
    expect(await token.getAttribute("type")).toBe("password")
    await greeting.fill("Howdy from the console")
    await token.fill(SECRET)
    await form.getByRole("button", { name: "Save settings" }).click()
    await form.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    expect(await token.inputValue()).toBe("****")

    // Stored: the integration answers with the new greeting, and the secret is set.
    expect((await json(await c.server.request("/integrations/example/ping"))).greeting).toBe("Howdy from the console")
    const stored = await json(await c.server.request("/api/v1/admin/integrations/example/settings"))
    expect(stored.settings.find((s: { key: string }) => s.key === "EXAMPLE_API_TOKEN")).toMatchObject({
      is_set: true,
      source: "stored",
      value: "****"
    })

    // A second save with the mask untouched keeps the secret (the mask is not even sent).
    await greeting.fill("Howdy again")
    await form.getByRole("button", { name: "Save settings" }).click()
    await form.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    expect(await greeting.inputValue()).toBe("Howdy again")
    const again = await json(await c.server.request("/api/v1/admin/integrations/example/settings"))
    expect(again.settings.find((s: { key: string }) => s.key === "EXAMPLE_API_TOKEN")).toMatchObject({ is_set: true, source: "stored" })

    await page.getByTestId("module-example-stats").getByText("Example stats").waitFor()
    await page.getByTestId("worker-stats-snapshot").getByText("running").waitFor()
    await screenshot(page, "console-integration")

    expect(await page.content()).not.toContain(SECRET)
    await page.reload()
    await page.getByRole("form", { name: "Settings" }).getByLabel("API token").waitFor()
    expect(await page.getByRole("form", { name: "Settings" }).getByLabel("API token").inputValue()).toBe("****")
    expect(await page.content()).not.toContain(SECRET)
    const seen = await Promise.all(responses)
    expect(seen.some((response) => response.url.includes("/api/v1/admin/integrations/example/settings"))).toBe(true)
    expect(seen.filter((response) => response.body.includes(SECRET)).map((response) => response.url)).toEqual([])
  })

  it("draws the mailbox's form from its manifest: sections, controls by type, advanced folded, errors by the field, Test connection", async () => {
    const { page } = c
    await page.goto(`${c.server.baseUrl}/admin/integrations/mailbox`)
    const form = page.getByRole("form", { name: "Settings" })
    for (const group of ["Account", "Server", "Polling", "Screening"]) await form.getByRole("group", { name: group }).waitFor()
    expect(await form.getByLabel("Port").getAttribute("type")).toBe("number")
    expect(await form.getByLabel("App password").getAttribute("type")).toBe("password")
    const security = form.getByLabel("Security")
    expect(await security.evaluate((select) => (select as any).tagName as string)).toBe("SELECT")
    expect(await security.locator("option").allTextContents()).toEqual(["tls (default)", "tls", "starttls", "plain"])
    // Advanced settings are folded until asked for.
    expect(await form.getByLabel("Start delay (ms)").isVisible()).toBe(false)
    await form.getByText(/^Advanced polling settings/).click()
    await form.getByLabel("Start delay (ms)").fill("0")

    await form.getByLabel("Address").fill("someone@example.test")
    await form.getByLabel("App password").fill("app-password")
    await form.getByLabel("IMAP server").fill("imap.nowhere.invalid")
    // A wrong value: the server refuses it (422) and the form says so under its field.
    await form.getByLabel("Port").fill("70000")
    await form.getByRole("button", { name: "Save settings" }).click()
    const port = form.getByLabel("Port")
    await form.locator("[aria-invalid=true][name=MAILBOX_IMAP_PORT]").waitFor()
    expect(await port.evaluate((input) => (input as any).closest("label").textContent as string)).toMatch(/65535/)
    await port.fill("993")

    await form.getByRole("button", { name: "Test connection" }).click()
    await form.getByTestId("connection-test").filter({ hasText: /^Failed: Cannot reach the IMAP server imap\.nowhere\.invalid/ }).waitFor()
    await screenshot(page, "console-integration-settings")

    // Saved with the wrong host: the page shows the mailbox failing within one poll interval.
    await form.getByRole("button", { name: "Save settings" }).click()
    await form.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    const status = page.getByTestId("integration-status")
    await status.getByText("Failing", { exact: true }).waitFor({ timeout: scaled(30_000) })
    await page.getByTestId("integration-reason").filter({ hasText: /imap\.nowhere\.invalid.*, since / }).waitFor()
    const nav = page.getByRole("navigation", { name: "Cairn" })
    await nav.locator("[data-testid=\"readiness-Mailbox\"][data-state=\"failing\"]").waitFor({ timeout: scaled(30_000) })
    // Back to not configured, for the tests after this one.
    await c.server.request("/api/v1/admin/integrations/mailbox/settings", {
      method: "PUT",
      body: JSON.stringify({ MAILBOX_EMAIL: null, MAILBOX_APP_PASSWORD: null, MAILBOX_IMAP_HOST: null, MAILBOX_START_DELAY_MS: null })
    })
  })

  it("copies the bridge's webhook URL as an absolute URL on this server", async () => {
    const { page } = c
    await page.goto(`${c.server.baseUrl}/admin/integrations/msgbridge`)
    const webhook = page.getByRole("region", { name: "Webhook" })
    await webhook.getByText("Point the chat server's webhook").waitFor()
    const expected = `${c.server.baseUrl}/integrations/msgbridge/webhook?token=<MSGBRIDGE_WEBHOOK_TOKEN>`
    expect(await webhook.getByLabel("Webhook URL").textContent()).toBe(expected)
    await webhook.getByRole("button", { name: "Copy" }).click()
    await webhook.getByRole("button", { name: "Copied" }).waitFor()
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText() as Promise<string>)).toBe(expected)
  })

  it("fits a phone's width", async () => {
    const { page } = c
    await page.setViewportSize({ width: 390, height: 800 })
    for (const path of ["/admin/integrations", "/admin/integrations/msgbridge"]) {
      await page.goto(`${c.server.baseUrl}${path}`)
      await page.getByRole("heading", { level: 1 }).waitFor()
      await page.getByRole("table").first().waitFor()
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number), path).toBeLessThanOrEqual(390)
    }
  })
})
