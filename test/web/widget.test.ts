/**
 * The embeddable widget in a real Chromium, on a host page served from another loopback port whose
 * backend mints tokens through Cairn with its own key: the token handshake, renewals pushed into the
 * live widget while an answer streams (the stream survives them, and the first token's expiry), a
 * fresh token asked for after a 401, what the token's scopes hide, a call outside them refused with
 * the server's reason, and a page on an origin not allowed told so (a page lying about its origin is
 * refused by the browser).
 */
import { ConfigProvider, Effect, Either } from "effect"
import { mkdirSync } from "node:fs"
import * as path from "node:path"
import type { Browser, Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { appConfig } from "../../src/config/AppConfig.ts"
import { widgetFrameAncestors } from "../../src/http/WebApp.ts"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { scaled } from "../support/time.ts"
import { startWidgetHost, startWidgetStack, type WidgetHost, type WidgetStack } from "../support/widgetHost.ts"

const tokenLifeSeconds = 5
const screenshotDir = path.resolve(import.meta.dirname, "../../docs/web")

/** The widget's frame once its script has mounted it and it has a token. */
const widgetFrame = async (page: Page): Promise<Frame> => {
  const handle = await page.waitForSelector("iframe[data-cairn-widget]")
  const frame = (await handle.contentFrame())!
  await frame.waitForSelector("[data-testid=\"widget\"]:not([data-tokens=\"0\"])")
  return frame
}

const tokensReceived = async (frame: Frame) => Number(await frame.getByTestId("widget").getAttribute("data-tokens"))

const lastAnswer = (frame: Frame) => frame.locator("li[data-role=\"assistant\"]").last()

describe("embeddable widget", () => {
  let stack: WidgetStack
  let browser: Browser
  beforeAll(async () => {
    ensureWebBuilt()
    stack = await startWidgetStack({ WIDGET_TOKEN_LIFETIME_SECONDS: String(tokenLifeSeconds) })
    await stack.addBot("helper", ["chat"])
    await stack.addBot("reader", ["sessions:read"])
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await stack?.close()
  })

  it(
    "gets its token from the host page, streams an answer through renewals past the first token's life, and chats on with a renewed one",
    async () => {
      const { llm, host } = stack
      llm.reset()
      const story =
        "Once a small shop sold maps of places that did not exist yet, and every morning a traveller came in to ask whether the road to the sea had been drawn. One day it was."
      llm.script({ text: story, chunkDelayMs: 250 }, { text: "Glad you liked it. Ask me about opening hours any time." })
      const page = await browser.newPage({ viewport: { width: 420, height: 640 } })
      const errors: Array<string> = []
      page.on("console", (message) => message.type() === "error" && errors.push(message.text()))
      const mintsBefore = host.mints.length
      await page.goto(host.pageUrl({ bot: "helper", renewSeconds: 2 }))
      const frame = await widgetFrame(page)
      expect(host.mints.length).toBeGreaterThan(mintsBefore)
      expect(await frame.getByRole("heading").textContent()).toBe("Bot helper")

      await frame.getByLabel("Message").fill("Tell me a long story")
      await frame.getByLabel("Message").press("Enter")
      await lastAnswer(frame).filter({ hasText: "Once" }).waitFor()
      const streamingFrom = await tokensReceived(frame)
      const firstToken = host.mints.at(-1)!
      // While the answer streams, renewed tokens arrive in the live widget...
      await expect.poll(() => tokensReceived(frame), { timeout: 10_000 }).toBeGreaterThanOrEqual(streamingFrom + 2)
      expect(await lastAnswer(frame).getAttribute("data-state")).toBe("streaming")
      // ...and the answer completes, whole and once, after the token it started with has expired.
      await lastAnswer(frame).and(frame.locator("[data-state=\"done\"]")).waitFor({ timeout: 20_000 })
      expect(Date.now()).toBeGreaterThan(Date.parse(firstToken.expires_at))
      expect((await lastAnswer(frame).locator(".cairn-widget__text").textContent())?.trim()).toBe(story)
      const tokens = host.mints.slice(mintsBefore).map((mint) => mint.token)
      expect(new Set(tokens).size).toBe(tokens.length)
      expect(tokens.length).toBeGreaterThanOrEqual(3)

      // The next message goes out with a renewed token (the first one is expired by now).
      await frame.getByLabel("Message").fill("Lovely, thank you")
      await frame.getByLabel("Message").press("Enter")
      await lastAnswer(frame).filter({ hasText: "Glad you liked it." }).and(frame.locator("[data-state=\"done\"]")).waitFor()
      const calls = llm.requestsTo("/v1/chat/completions")
      expect(calls).toHaveLength(2)
      expect(JSON.stringify(calls[1]!.body.messages.at(-1))).toContain("Lovely, thank you")

      mkdirSync(screenshotDir, { recursive: true })
      await (await page.$("iframe[data-cairn-widget]"))!.screenshot({ path: path.join(screenshotDir, "widget.png") })
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it("stops an answer being written", async () => {
    const { llm, host } = stack
    llm.reset()
    const long = Array.from({ length: 60 }, (_, i) => `step${i}`).join(" ")
    llm.script({ text: long, chunkDelayMs: 200 }, { text: "Ready again." })
    const page = await browser.newPage()
    await page.goto(host.pageUrl({ bot: "helper" }))
    const frame = await widgetFrame(page)
    await frame.getByLabel("Message").fill("Count slowly")
    await frame.getByLabel("Message").press("Enter")
    await lastAnswer(frame).filter({ hasText: "step2" }).waitFor()
    await frame.getByRole("button", { name: "Stop" }).click()
    await lastAnswer(frame).and(frame.locator("[data-state=\"done\"]")).filter({ hasText: "Stopped" }).waitFor({ timeout: 10_000 })
    expect(await lastAnswer(frame).locator(".cairn-widget__text").textContent()).not.toContain("step59")
    expect(await frame.getByRole("button", { name: "Stop" }).count()).toBe(0)
    // The widget takes the next message at once.
    await frame.getByLabel("Message").fill("Again")
    await frame.getByLabel("Message").press("Enter")
    await lastAnswer(frame).filter({ hasText: "Ready again." }).waitFor()
    await page.close()
  }, scaled(30_000))

  it("asks the host for a fresh token when a call answers 401, and sends the message with it", async () => {
    const { llm, host } = stack
    llm.reset()
    llm.script({ text: "Answered after a fresh token." })
    const page = await browser.newPage()
    // No timed renewal within the test: only the widget's own request can bring a new token.
    await page.goto(host.pageUrl({ bot: "helper", renewSeconds: 3600 }))
    const frame = await widgetFrame(page)
    const first = host.mints.at(-1)!
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(first.expires_at) - Date.now()) + 1_000))
    await frame.getByLabel("Message").fill("Still there?")
    await frame.getByLabel("Message").press("Enter")
    await lastAnswer(frame).filter({ hasText: "Answered after a fresh token." }).waitFor()
    expect(await tokensReceived(frame)).toBe(2)
    expect(host.mints.at(-1)!.token).not.toBe(first.token)
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(1)
    await page.close()
  }, scaled(30_000))

  it("hides what the token's scopes do not allow, and shows the server's reason for a call outside them", async () => {
    const { llm, host } = stack
    llm.reset()
    const page = await browser.newPage()

    // A bot whose key cannot chat: no composer, a notice instead.
    await page.goto(host.pageUrl({ bot: "reader" }))
    let frame = await widgetFrame(page)
    await frame.getByTestId("no-chat").waitFor()
    expect(await frame.getByLabel("Message").count()).toBe(0)

    // A bot whose key chats but cannot upload: no attach button.
    await page.goto(host.pageUrl({ bot: "helper" }))
    frame = await widgetFrame(page)
    await frame.getByLabel("Message").waitFor()
    expect(await frame.getByRole("button", { name: "Attach images" }).count()).toBe(0)

    // A host that mints for another bot than the one it embeds: the server refuses, the widget says why.
    await page.goto(host.pageUrl({ bot: "reader", mintBot: "helper" }))
    frame = await widgetFrame(page)
    await frame.getByLabel("Message").fill("Hello")
    await frame.getByLabel("Message").press("Enter")
    const refusal = lastAnswer(frame).getByRole("alert")
    await refusal.waitFor()
    expect(await refusal.textContent()).toBe("This token is confined to its own bot, not reader")
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(0)
    await page.close()
  }, scaled(30_000))

  it("ignores handshake messages from any other window or origin, on both sides", async () => {
    const { host } = stack
    const forger: WidgetHost = await startWidgetHost()
    forger.cairn = host.cairn
    try {
      const page = await browser.newPage()
      await page.goto(host.pageUrl({ bot: "helper", renewSeconds: 3600, extraFrame: forger.forgerUrl }))
      const frame = await widgetFrame(page)
      const mintsBefore = host.mints.length
      const forgerFrame = page.frames().find((candidate) => candidate.url().startsWith(forger.origin))!
      await expect.poll(() => forgerFrame.evaluate(() => (globalThis as any).posted as number), { timeout: 10_000 }).toBe(30)
      // The widget kept the host's token (it can still chat), and the host minted nothing for the forger.
      expect(await tokensReceived(frame)).toBe(1)
      expect(await frame.getByTestId("no-chat").count()).toBe(0)
      await frame.getByLabel("Message").waitFor()
      expect(host.mints.length).toBe(mintsBefore)
      await page.close()
    } finally {
      await forger.close()
    }
  }, scaled(30_000))

  it("is framed only by allowed origins, and tells a page on another origin so instead of a broken frame", async () => {
    const { server, host } = stack
    const widgetPage = await server.request("/widget/helper", { auth: null })
    expect(widgetPage.status).toBe(200)
    expect(widgetPage.headers.get("content-security-policy")).toContain(`frame-ancestors ${host.origin}`)
    expect(widgetPage.headers.get("x-frame-options")).toBeNull()
    // The app itself stays unframeable.
    expect((await server.request("/", { auth: null, headers: { accept: "text/html" } })).headers.get("content-security-policy")).toContain(
      "frame-ancestors 'none'"
    )
    const script = await server.request("/widget.js", { auth: null })
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toContain("javascript")

    const stranger: WidgetHost = await startWidgetHost()
    stranger.cairn = host.cairn
    try {
      const page = await browser.newPage()
      await page.goto(stranger.pageUrl({ bot: "helper" }))
      const handle = await page.waitForSelector("iframe[data-cairn-widget]")
      // Not a broken frame: a page saying why, and what the site's owner can do.
      const frame = (await handle.contentFrame())!
      await frame.getByRole("heading", { name: "This chat is not available on this site" }).waitFor()
      expect(await frame.getByTestId("widget-refused").textContent()).toContain(stranger.origin)
      expect(await frame.locator("[data-testid=\"widget\"]").count()).toBe(0)
      // Nothing was minted for the stranger: the widget never ran to ask.
      expect(stranger.mints).toEqual([])
      // A page that lies about its origin gets the widget with its frame-ancestors, which the browser refuses.
      const refused: Array<string> = []
      page.on("console", (message) => refused.push(message.text()))
      await page.evaluate(
        `document.querySelector("iframe[data-cairn-widget]").src = ${
          JSON.stringify(`${server.baseUrl}/widget/helper?origin=${encodeURIComponent(host.origin)}`)
        }`
      )
      await expect.poll(() => refused.some((text) => text.includes("frame-ancestors")), { timeout: 10_000 }).toBe(true)
      expect(stranger.mints).toEqual([])
      await page.close()
    } finally {
      await stranger.close()
    }
  }, scaled(30_000))
})

describe("widget settings", () => {
  const load = (settings: Record<string, string>) =>
    Effect.runSync(Effect.either(ConfigProvider.fromMap(new Map(Object.entries(settings))).load(appConfig)))

  it("reads WIDGET_EMBED_ORIGINS as origins (none by default) and refuses anything else at startup", () => {
    const none = load({})
    expect(Either.isRight(none) && none.right.widgetEmbedOrigins).toEqual([])
    expect(widgetFrameAncestors([])).toBe("'none'")
    const two = load({ WIDGET_EMBED_ORIGINS: "https://shop.example.com, http://127.0.0.1:8080" })
    expect(Either.isRight(two) && widgetFrameAncestors(two.right.widgetEmbedOrigins)).toBe("https://shop.example.com http://127.0.0.1:8080")
    for (const bad of ["*", "https://shop.example.com/path", "shop.example.com", "https://a.example 'unsafe-inline'"]) {
      const refused = load({ WIDGET_EMBED_ORIGINS: bad })
      expect(Either.isLeft(refused) && String(refused.left)).toContain("WIDGET_EMBED_ORIGINS")
    }
  })

  it("takes a widget token life from 1 to 900 seconds, 900 by default", () => {
    const byDefault = load({})
    expect(Either.isRight(byDefault) && byDefault.right.widgetTokenLifetimeSeconds).toBe(900)
    for (const bad of ["0", "901", "ten"]) {
      const refused = load({ WIDGET_TOKEN_LIFETIME_SECONDS: bad })
      expect(Either.isLeft(refused) && String(refused.left)).toContain("WIDGET_TOKEN_LIFETIME_SECONDS")
    }
  })
})
