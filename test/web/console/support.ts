/**
 * A console test's setup: a real Cairn (PGlite) with the fake LLM, headless Chromium, and a page
 * signed in as the first admin (made through the API, signed in through the page).
 */
import type { Browser, Locator, Page } from "playwright-core"
import { expect } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../../fixtures/fakeLlm.ts"
import { ensureWebBuilt, launchBrowser } from "../../support/browser.ts"
import { startServer, type TestServer } from "../../support/server.ts"
import { expectNoSeriousViolations } from "../axe.ts"
import { signInThroughPage } from "../support.ts"

export const adminPassword = "correct horse battery"

export interface Console {
  readonly server: TestServer
  readonly llm: FakeLlm
  readonly browser: Browser
  readonly page: Page
  readonly close: () => Promise<void>
}

export const startConsole = async (
  options: { readonly env?: Record<string, string>; readonly viewport?: { width: number; height: number } } = {}
): Promise<Console> => {
  ensureWebBuilt()
  const llm = await startFakeLlm()
  const server = await startServer({ backend: "pglite", env: { ...fakeLlmEnv(llm), ...options.env } })
  await server.request("/auth/setup", { method: "POST", body: JSON.stringify({ username: "root", password: adminPassword }) })
  const browser = await launchBrowser()
  const page = await (await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 860 } })).newPage()
  await signInThroughPage(page, server.baseUrl, "root", adminPassword)
  return {
    server,
    llm,
    browser,
    page,
    close: async () => {
      await browser.close()
      await server.close()
      await llm.close()
    }
  }
}

/** Unfolds the navigation's group holding the link `title` when it is folded, as a person would. */
export const unfoldGroupOf = async (page: Page, title: string) => {
  const nav = page.getByRole("navigation", { name: "Cairn" })
  await nav.getByRole("link", { name: "Chat", exact: true }).waitFor()
  const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`)
  const group = nav.locator(".nav-group").filter({ has: page.locator("a.nav-link span", { hasText: exact }) })
  if ((await group.count()) > 0 && (await group.first().getAttribute("data-open")) === "false") {
    await group.first().locator(".nav-group-toggle").click()
  }
}

/** Opens a console page through the navigation (unfolding its group), as a user would. */
export const openPage = async (page: Page, title: string) => {
  const nav = page.getByRole("navigation", { name: "Cairn" })
  await unfoldGroupOf(page, title)
  await nav.getByRole("link", { name: title, exact: true }).click()
  await page.getByRole("heading", { level: 1, name: title }).waitFor()
}

/**
 * What every console page is held to: axe-core finds no serious or critical violation in its main
 * region in light and dark, and at phone width, where nothing overflows sideways. Leaves the page
 * light and at desktop width.
 */
export const expectCleanEverywhere = async (page: Page, label: string) => {
  await expectNoSeriousViolations(page, label, "main")
  await page.emulateMedia({ colorScheme: "dark" })
  await expectNoSeriousViolations(page, `${label}, dark`, "main")
  await page.emulateMedia({ colorScheme: "light" })
  await page.setViewportSize({ width: 390, height: 800 })
  await expectFitsPhone(page)
  await expectNoSeriousViolations(page, `${label}, phone`, "main")
  await page.setViewportSize({ width: 1280, height: 860 })
}

/**
 * At phone width (390 px) nothing overflows sideways, `within` included. Polled: Chart.js resizes
 * its canvases from a ResizeObserver, a frame or more after the viewport changes.
 */
export const expectFitsPhone = async (page: Page, ...within: ReadonlyArray<Locator>) => {
  await expect.poll(() => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number))
    .toBeLessThanOrEqual(390)
  for (const locator of within) {
    await expect.poll(async () => {
      const box = (await locator.boundingBox())!
      return box.x + box.width
    }).toBeLessThanOrEqual(390)
  }
}
