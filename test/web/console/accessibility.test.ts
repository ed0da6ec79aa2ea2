/**
 * Every console page in a real Chromium against a real Cairn (PGlite): axe-core finds no serious or
 * critical violation on any of them (each has its `main` landmark), light and dark, desktop and
 * phone. Calm navigation (issue 58 item 4): the links in folding groups, only the open page's group
 * unfolded on a fresh console and a fold remembered; unconfigured integrations grey, not red; sign
 * out of this device beside sign out everywhere; one menu button on a phone, holding the
 * conversations too.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scaled } from "../../support/time.ts"
import { expectNoSeriousViolations } from "../axe.ts"
import { screenshot, signInThroughPage } from "../support.ts"
import { adminPassword, type Console, startConsole } from "./support.ts"

const desktop = { width: 1280, height: 860 }
const phone = { width: 390, height: 844 }

/** Each console page, and the pages under them a person reaches. */
const declared = fs.readFileSync(path.resolve(import.meta.dirname, "../../../src/web/app/pages.ts"), "utf8")
const paths = [...[...declared.matchAll(/^\s+path: "([^"]+)",$/gm)].map((match) => match[1]!), "/admin/integrations/mailbox"]

const go = async (c: Console, path: string) => {
  await c.page.evaluate(
    `window.history.pushState(null, "", ${JSON.stringify(path)}); window.dispatchEvent(new Event("cairn:navigate"))`
  )
}

describe("console: every page is accessible, and the navigation is calm", () => {
  let c: Console

  beforeAll(async () => {
    c = await startConsole()
  }, scaled(120_000))
  afterAll(async () => {
    await c?.close()
  })

  it("folds the navigation into groups: only the open page's unfolded, a fold remembered", async () => {
    const { page } = c
    const nav = page.getByRole("navigation", { name: "Cairn" })
    await nav.getByRole("button", { name: "Configure" }).waitFor()
    // On the chat, every group is folded: the links are there to unfold, not to read through.
    for (const group of ["Configure", "Access", "Operate", "Server"]) {
      expect(await nav.getByRole("button", { name: group }).getAttribute("aria-expanded")).toBe("false")
    }
    expect(await nav.getByRole("link", { name: "Bots", exact: true }).isVisible()).toBe(false)
    await nav.getByRole("button", { name: "Configure" }).click()
    await nav.getByRole("link", { name: "Bots", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Bots" }).waitFor()
    await page.reload()
    await nav.getByRole("link", { name: "Bots", exact: true }).waitFor()
    expect(await nav.getByRole("button", { name: "Configure" }).getAttribute("aria-expanded")).toBe("true")
    await screenshot(page, "console-navigation")
  })

  it("shows unconfigured integrations grey, not red, in the words of their status", async () => {
    const { page } = c
    const nav = page.getByRole("navigation", { name: "Cairn" })
    const bridge = nav.getByTestId("sidebar-section-msgbridge")
    const dot = bridge.locator("[data-testid=\"readiness-Messages\"][data-state=\"not_configured\"]")
    await dot.waitFor()
    expect(await dot.getAttribute("title")).toMatch(/^not configured: missing MSGBRIDGE_SERVER_URL/)
    expect(await dot.getAttribute("class")).toContain("off")
    const colour = await dot.evaluate((element) => (globalThis as any).getComputedStyle(element).backgroundColor as string)
    const red = await page.evaluate(`getComputedStyle(document.documentElement).getPropertyValue("--error")`)
    expect(colour).not.toBe(red)
    expect(colour).not.toMatch(/rgb\(180, 35, 24\)|rgb\(249, 112, 102\)/)
  })

  it("has no serious or critical axe violation on any page, light and dark, desktop and phone", async () => {
    const { page } = c
    for (const viewport of [desktop, phone]) {
      await page.setViewportSize(viewport)
      for (const colorScheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme })
        for (const path of paths) {
          await go(c, path)
          await page.locator("main h1").first().waitFor()
          await page.locator("[aria-busy=true]").first().waitFor({ state: "detached" }).catch(() => undefined)
          expect(await page.locator("main").count(), path).toBe(1)
          await expectNoSeriousViolations(page, `${path}, ${colorScheme}, ${viewport.width} px`)
        }
      }
    }
    await page.setViewportSize(desktop)
    await page.emulateMedia({ colorScheme: "light" })
  })

  it("has one menu button on a phone, holding the console's links and the conversations", async () => {
    const { page } = c
    await page.setViewportSize(phone)
    await go(c, "/")
    await page.getByRole("textbox").first().waitFor()
    const menus = page.getByRole("button", { name: /^(Menu|Conversations)$/ })
    const visible = await menus.evaluateAll((buttons) => buttons.filter((b) => (b as any).offsetParent !== null).length)
    expect(visible).toBe(1)
    await page.getByRole("button", { name: "Menu" }).click()
    await page.getByRole("navigation", { name: "Cairn" }).getByRole("link", { name: "Chat" }).waitFor()
    expect(await page.locator(".sidebar").isVisible()).toBe(true)
    await screenshot(page, "console-phone-menu")
    await page.getByRole("button", { name: "Menu" }).click()
    await page.setViewportSize(desktop)
  })

  it("signs out of this device only, beside signing out everywhere", async () => {
    const other = await c.browser.newContext({ viewport: desktop })
    const otherPage = await other.newPage()
    await signInThroughPage(otherPage, c.server.baseUrl, "root", adminPassword)
    const { page } = c
    await page.getByRole("button", { name: "Sign out everywhere" }).waitFor()
    await page.getByRole("button", { name: "Sign out", exact: true }).click()
    await page.getByLabel("Username").waitFor()
    // The other browser's sign-in lives on: a reload signs it in again from its cookie.
    await otherPage.reload()
    await otherPage.getByTestId("signed-in-as").waitFor()
    await otherPage.getByRole("button", { name: "Sign out everywhere" }).click()
    await otherPage.getByLabel("Username").waitFor()
    await other.close()
    await signInThroughPage(page, c.server.baseUrl, "root", adminPassword)
  })
})
