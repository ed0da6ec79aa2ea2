/**
 * The console's Widget page in Chromium, with a real host site on another origin: a site not yet
 * allowed shows a notice in the widget's place; allowing it in the console works on its next page
 * load, with no restart; the embed snippet copied from the console, pasted into a page of that
 * site, brings the launcher with the chosen greeting, theme and accent, and chats. axe-core on the
 * page in light and dark, desktop and phone, and on the notice.
 */
import type { Browser, Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { scaled } from "../support/time.ts"
import { hostPage, startWidgetHost, startWidgetStack, type WidgetHost, type WidgetStack } from "../support/widgetHost.ts"
import { expectNoSeriousViolations } from "./axe.ts"
import { adminPassword, openPage } from "./console/support.ts"
import { screenshot, signInThroughPage } from "./support.ts"

const frameOf = async (page: Page): Promise<Frame> =>
  (await (await page.waitForSelector("iframe[data-cairn-widget]", { state: "attached" })).contentFrame())!

describe("console: widget", () => {
  let stack: WidgetStack
  let browser: Browser
  let site: WidgetHost
  beforeAll(async () => {
    ensureWebBuilt()
    stack = await startWidgetStack()
    await stack.addBot("helper", ["chat"])
    await stack.server.request("/auth/setup", { method: "POST", body: JSON.stringify({ username: "root", password: adminPassword }) })
    // A second site, not on WIDGET_EMBED_ORIGINS: its owner asks for it in the console.
    site = await startWidgetHost()
    site.cairn = stack.host.cairn
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await site?.close()
    await stack?.close()
  })

  it("allows a site at runtime and hands out a snippet that works when pasted", async () => {
    const { server, llm } = stack
    llm.reset()
    llm.script({ text: "Hello from the bot." })
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ["clipboard-read", "clipboard-write"] })
    const visitor = await context.newPage()

    // Not allowed yet: the launcher opens a notice, not a broken frame, and nothing is minted.
    await visitor.goto(site.pageUrl({ bot: "helper", mode: "launcher" }))
    await visitor.locator("button[data-cairn-open]").click()
    const notice = await frameOf(visitor)
    await notice.getByRole("heading", { name: "This chat is not available on this site" }).waitFor()
    expect(await notice.getByTestId("widget-refused").textContent()).toContain(site.origin)
    await expectNoSeriousViolations(notice as unknown as Page, "refusal notice")
    expect(site.mints).toEqual([])

    // The console: the bot's Widget page.
    const admin = await context.newPage()
    await signInThroughPage(admin, server.baseUrl, "root", adminPassword)
    await openPage(admin, "Widget")
    await admin.getByLabel("Bot", { exact: true }).selectOption("helper")
    await admin.getByTestId("no-origins").waitFor()
    expect(await admin.getByTestId("default-origins").textContent()).toContain(stack.host.origin)
    // A value that is no site's address: said next to the field.
    await admin.getByLabel("Site", { exact: true }).fill("shop dot example")
    await admin.getByRole("button", { name: "Allow site" }).click()
    await admin.getByText("Enter a site's address with its scheme, like https://shop.example.com").waitFor()
    // A page's address is taken as its origin.
    await admin.getByLabel("Site", { exact: true }).fill(`${site.origin}/some/page?x=1`)
    await admin.getByRole("button", { name: "Allow site" }).click()
    await admin.getByRole("list", { name: "Allowed sites" }).getByText(site.origin, { exact: true }).waitFor()

    // The visitor's next page load shows the chat: no restart.
    await visitor.reload()
    // The panel stays open through the reload (it was open before it).
    await visitor.locator("button[data-cairn-open][aria-expanded=\"true\"]").waitFor({ state: "attached" })
    const widget = await frameOf(visitor)
    await widget.getByLabel("Message").waitFor()
    expect(await widget.getByTestId("widget-refused").count()).toBe(0)

    // The snippet, with this site's token route, a greeting, the dark theme and an accent colour; copied with the button.
    await admin.getByLabel("Token route", { exact: true }).fill("/token?bot=helper")
    await admin.getByLabel("Greeting", { exact: true }).fill("Hello from the shop \"Maps\"")
    await admin.getByLabel("Theme", { exact: true }).selectOption("dark")
    await admin.getByLabel("Accent colour").fill("#8a2be2")
    const shown = (await admin.locator("code[aria-label=\"Embed snippet\"]").textContent())!
    expect(shown).toBe(
      `<script src="${server.baseUrl}/widget.js" data-bot="helper" data-token-url="/token?bot=helper" data-theme="dark" data-accent="#8a2be2" data-greeting="Hello from the shop &quot;Maps&quot;" async></script>`
    )
    await admin.getByRole("button", { name: "Copy" }).click()
    await admin.getByRole("button", { name: "Copied" }).waitFor()
    const copied = await admin.evaluate<string>("navigator.clipboard.readText()")
    expect(copied).toBe(shown)
    await screenshot(admin, "console-widget")
    await expectNoSeriousViolations(admin, "Widget page, light, desktop")
    await admin.emulateMedia({ colorScheme: "dark" })
    await expectNoSeriousViolations(admin, "Widget page, dark, desktop")
    await admin.setViewportSize({ width: 390, height: 844 })
    await expectNoSeriousViolations(admin, "Widget page, dark, phone")
    await admin.emulateMedia({ colorScheme: "light" })
    await expectNoSeriousViolations(admin, "Widget page, light, phone")

    // Pasted into a page of the site: the launcher with the greeting and the accent; the widget dark; it chats.
    // A new visitor (a context of its own): the one above opened the panel, which the site remembers.
    const newcomer = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const pasted = await newcomer.newPage()
    await pasted.goto(site.serve("/pasted", hostPage(copied)))
    await pasted.locator("[data-cairn-greeting]").filter({ hasText: "Hello from the shop \"Maps\"" }).waitFor()
    expect(await pasted.evaluate<string>(`getComputedStyle(document.querySelector("button[data-cairn-open]")).backgroundColor`)).toBe(
      "rgb(138, 43, 226)"
    )
    await pasted.locator("button[data-cairn-open]").click()
    const chat = await frameOf(pasted)
    await chat.getByLabel("Message").fill("Hi")
    await chat.getByLabel("Message").press("Enter")
    await chat.locator("li[data-role=\"assistant\"]").filter({ hasText: "Hello from the bot." }).waitFor()
    expect(await chat.evaluate<string>(`getComputedStyle(document.documentElement).colorScheme`)).toBe("dark")
    await newcomer.close()
    await context.close()
  }, scaled(90_000))
})
