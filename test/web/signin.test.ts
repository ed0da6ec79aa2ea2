/**
 * Sign-in in a real Chromium against a real Cairn (PGlite): the first-admin setup page, the access
 * token refreshed silently from the HttpOnly cookie after it expires (a 3-second token here),
 * a reload signed in by the cookie alone, logout everywhere, and login with a password.
 */
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { screenshot, setUpThroughPage, signInThroughPage } from "./support.ts"

const password = "correct horse battery"

describe("web app sign-in", () => {
  let server: TestServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  beforeAll(async () => {
    ensureWebBuilt()
    server = await startServer({ backend: "pglite", env: { ACCESS_TOKEN_SECONDS: "3" } })
    browser = await launchBrowser()
    context = await browser.newContext()
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("creates the first admin on the setup page, which needs the server's key", async () => {
    await page.goto(`${server.baseUrl}/`)
    await page.getByLabel("Server API key").fill("not-the-key")
    await page.getByLabel("Username").fill("root")
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Create admin and sign in" }).click()
    await page.getByRole("alert").filter({ hasText: "That is not the server's API key." }).waitFor()

    await setUpThroughPage(page, server.baseUrl, server.apiKey, "root", password, "setup")
    expect((await json(await server.request("/auth/status", { auth: null }))).setup_required).toBe(false)
    // The refresh token is in an HttpOnly cookie the page's script cannot read.
    const cookies = await context.cookies(server.baseUrl + "/auth/refresh")
    expect(cookies.find((c) => c.name === "cairn_refresh")).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/auth/refresh" })
    expect(await page.evaluate(() => (globalThis as any).document.cookie as string)).not.toContain("cairn_refresh")
  })

  it("refreshes the access token silently before it expires, and a reload signs in from the cookie", async () => {
    const firstToken = await page.evaluate(() => (globalThis as any).cairnAuth.accessToken as string)
    const current = () => page.evaluate(() => (globalThis as any).cairnAuth.accessToken as string)
    // The page refreshes before the first token's 3-second life ends, by itself.
    await expect.poll(() => page.evaluate(() => (globalThis as any).cairnAuth.refreshes as number)).toBeGreaterThanOrEqual(1)
    expect(await current()).not.toBe(firstToken)
    // Past that life the first token is refused, while the page's token of the moment still works
    // (read again on each try: on a busy machine one may expire between the read and the call).
    await expect.poll(async () => (await server.request("/auth/me", { auth: firstToken })).status).toBe(401)
    await expect.poll(async () => {
      const me = await server.request("/auth/me", { auth: await current() })
      return me.status === 200 ? (await json(me)).user.username : me.status
    }).toBe("root")
    await page.getByRole("button", { name: "New channel" }).waitFor()

    await page.reload()
    await page.getByTestId("signed-in-as").filter({ hasText: "root" }).waitFor()
    await expect(page.getByLabel("Password").count()).resolves.toBe(0)
  })

  it("signs out everywhere: this tab and another one need the password again", async () => {
    const other = await context.newPage()
    await other.goto(`${server.baseUrl}/`)
    await other.getByTestId("signed-in-as").filter({ hasText: "root" }).waitFor()

    await page.getByRole("button", { name: "Sign out everywhere" }).click()
    await page.getByRole("heading", { name: "Sign in to Cairn" }).waitFor()
    await page.reload()
    await page.getByRole("heading", { name: "Sign in to Cairn" }).waitFor()
    // The other tab's session ended too: its next refresh is refused.
    await other.reload()
    await other.getByRole("heading", { name: "Sign in to Cairn" }).waitFor()
    await other.close()

    await page.getByLabel("Username").fill("root")
    await page.getByLabel("Password").fill("wrong password")
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.getByRole("alert").filter({ hasText: "Invalid username or password" }).waitFor()
    await screenshot(page, "sign-in")
    await signInThroughPage(page, server.baseUrl, "root", password)
  })
})
