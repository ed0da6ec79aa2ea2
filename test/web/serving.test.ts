/**
 * The web app as Cairn serves it: the built shell at `/` with history fallback, hashed assets cached
 * for a year, a strict Content-Security-Policy, the API's own 404s untouched; and in a real Chromium
 * the page loads, reaches the API through the typed client, and breaks none of its policy.
 */
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { startServer, type TestServer } from "../support/server.ts"

describe("web app serving", () => {
  let server: TestServer
  let browser: Browser
  beforeAll(async () => {
    ensureWebBuilt()
    server = await startServer({ backend: "pglite" })
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("serves the shell at / and at any app path, revalidated, under a strict policy", async () => {
    for (const path of ["/", "/chat/some-session", "/settings"]) {
      const response = await server.request(path, { auth: null, headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      expect(response.headers.get("cache-control")).toBe("no-cache")
      const policy = response.headers.get("content-security-policy") ?? ""
      expect(policy).toContain("script-src 'self'")
      expect(policy).toContain("frame-ancestors 'none'")
      expect(policy).not.toContain("unsafe-inline")
      expect(await response.text()).toContain("<div id=\"root\">")
    }
  })

  it("serves hashed assets immutable and gzipped, answers 304 to a matching ETag", async () => {
    const html = await (await server.request("/", { auth: null, headers: { accept: "text/html" } })).text()
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!
    const response = await server.request(script, { auth: null, headers: { "accept-encoding": "gzip" } })
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(response.headers.get("content-type")).toContain("javascript")
    const etag = response.headers.get("etag")!
    const again = await server.request(script, { auth: null, headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
  })

  it("keeps the server's own 404s: an unknown API path or asset, or a request not asking for a page, is not the app", async () => {
    const notAPage = await server.request("/chat/some-session", { auth: null, headers: { accept: "application/json" } })
    expect(notAPage.status).toBe(404)
    expect(await notAPage.json()).toEqual({ detail: "Not Found" })
    for (const path of ["/api/v1/no-such-thing", "/assets/no-such-file.js"]) {
      const response = await server.request(path, { auth: null })
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({ detail: "Not Found" })
    }
    const openAi = await server.request("/v1/no-such-thing", { auth: null })
    expect(openAi.status).toBe(404)
    expect(((await openAi.json()) as { error: { code: string } }).error.code).toBe("not_found")
  })

  it("loads in Chromium and reaches the API without breaking its policy", async () => {
    const page = await browser.newPage()
    const violations: Array<string> = []
    // The app's first refresh without a cookie is an expected 401; a policy violation is not.
    page.on("console", (message) => {
      if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text())
    })
    await page.goto(`${server.baseUrl}/`)
    // The setup page shows once the app has read /auth/status through the typed client.
    await page.getByRole("heading", { name: "Create the first admin" }).waitFor()
    expect(violations).toEqual([])
    await page.close()
  })
})
