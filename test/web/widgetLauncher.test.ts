/**
 * The widget as a site's visitor meets it, in a real Chromium on a host page of another origin:
 * the launcher in the corner with the host's greeting and an unread badge, the panel that fills a
 * phone's screen, the host's theme and accent colour from the embed tag (whatever the visitor's
 * system prefers), the whole of it by keyboard, the conversation kept through a host page reload,
 * and axe-core on the host page and in the widget, light and dark, desktop and phone.
 */
import type { Browser, Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { scaled } from "../support/time.ts"
import { startWidgetStack, type WidgetStack } from "../support/widgetHost.ts"
import { expectNoSeriousViolations } from "./axe.ts"
import { screenshot } from "./support.ts"

/** The widget's frame once the embed script has made it and it holds a token (the panel may be closed). */
const widgetFrame = async (page: Page): Promise<Frame> => {
  const handle = await page.waitForSelector("iframe[data-cairn-widget]", { state: "attached" })
  const frame = (await handle.contentFrame())!
  await frame.waitForSelector("[data-testid=\"widget\"]:not([data-tokens=\"0\"])", { state: "attached" })
  return frame
}

const launcher = (page: Page) => page.locator("button[data-cairn-open]")
const lastAnswer = (frame: Frame) => frame.locator("li[data-role=\"assistant\"]").last()
const focusedLabel = (frame: Frame) => frame.evaluate<string | null>(`document.activeElement?.getAttribute("aria-label") ?? null`)
const launcherFocused = (page: Page) => page.evaluate<boolean>(`document.activeElement?.hasAttribute("data-cairn-open") === true`)
const background = (target: Page | Frame, selector: string) =>
  target.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).backgroundColor`)

/** axe-core inside the widget's frame (its evaluate is the page's; the frame is cross-origin to the host). */
const expectFrameAccessible = (frame: Frame, label: string) => expectNoSeriousViolations(frame as unknown as Page, label)

describe("widget launcher", () => {
  let stack: WidgetStack
  let browser: Browser
  beforeAll(async () => {
    ensureWebBuilt()
    stack = await startWidgetStack()
    await stack.addBot("helper", ["chat"])
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await stack?.close()
  })

  it(
    "greets, counts an answer written while closed, keeps the host's light theme on a dark system, and keeps the conversation through a reload",
    async () => {
      const { llm, host } = stack
      llm.reset()
      const slow = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ")
      llm.script({ text: "We open at nine." }, { text: slow, chunkDelayMs: 120 }, { text: "You are welcome." })
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "dark" })
      const page = await context.newPage()
      const url = host.pageUrl({
        bot: "helper",
        mode: "launcher",
        theme: "light",
        accent: "#0b6e4f",
        greeting: "Hi! Ask me about opening hours."
      })
      await page.goto(url)
      let frame = await widgetFrame(page)

      // Closed: the greeting beside the launcher, counted on its badge.
      expect(await page.locator("[data-cairn-greeting]").textContent()).toContain("Hi! Ask me about opening hours.")
      expect(await launcher(page).getAttribute("aria-label")).toBe("Open chat, 1 unread")
      expect(await page.locator("[data-cairn-unread]").textContent()).toBe("1")
      expect(await background(page, "button[data-cairn-open]")).toBe("rgb(11, 110, 79)")
      await expectNoSeriousViolations(page, "host page, launcher closed, desktop")

      // Opened: focus in the message box; the greeting first; the host's light theme although the system is dark.
      await launcher(page).click()
      await expect.poll(() => focusedLabel(frame)).toBe("Message")
      expect(await frame.locator("[data-role=\"greeting\"]").textContent()).toBe("Hi! Ask me about opening hours.")
      expect(await background(frame, "body")).toBe("rgb(255, 255, 255)")
      expect(await page.locator("[data-cairn-greeting]").count()).toBe(0)
      await page.keyboard.type("When do you open?")
      await page.keyboard.press("Enter")
      await lastAnswer(frame).filter({ hasText: "We open at nine." }).and(frame.locator("[data-state=\"done\"]")).waitFor()
      expect(await background(frame, "li[data-role=\"user\"]")).toBe("rgb(11, 110, 79)")
      await expect.poll(() => focusedLabel(frame)).toBe("Message")
      await screenshot(page, "widget-launcher")
      await expectNoSeriousViolations(page, "host page, launcher open, desktop")
      await expectFrameAccessible(frame, "widget, light, desktop")

      // Closed by Escape while an answer is written: focus back on the launcher, the answer counted unread.
      await page.keyboard.type("And on Sundays?")
      await page.keyboard.press("Enter")
      await lastAnswer(frame).filter({ hasText: "word1" }).waitFor()
      await page.keyboard.press("Escape")
      await expect.poll(() => launcherFocused(page)).toBe(true)
      expect(await launcher(page).getAttribute("aria-expanded")).toBe("false")
      await expect.poll(() => launcher(page).getAttribute("aria-label"), { timeout: scaled(15_000) }).toBe("Open chat, 1 unread")

      // A reload: the same visitor, the same conversation; the greeting seen stays dismissed.
      await page.reload()
      frame = await widgetFrame(page)
      expect(await page.locator("[data-cairn-greeting]").count()).toBe(0)
      await launcher(page).click()
      const texts = frame.locator("li[data-role=\"user\"], li[data-role=\"assistant\"]")
      await expect.poll(async () => (await texts.allTextContents()).map((text) => text.trim())).toEqual([
        "When do you open?",
        "We open at nine.",
        "And on Sundays?",
        slow
      ])
      await page.keyboard.type("Thanks")
      await page.keyboard.press("Enter")
      await lastAnswer(frame).filter({ hasText: "You are welcome." }).waitFor()
      const sent = JSON.stringify(llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages)
      expect(sent).toContain("When do you open?")
      expect(sent).toContain("We open at nine.")
      await context.close()
    },
    scaled(60_000)
  )

  it("on a phone, in the host's dark theme on a light system, works by keyboard alone in a panel filling the screen", async () => {
    const { llm, host } = stack
    llm.reset()
    llm.script({ text: "Here to help." })
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: "light" })
    const page = await context.newPage()
    await page.goto(host.pageUrl({ bot: "helper", mode: "launcher", theme: "dark", greeting: "Hello there" }))
    const frame = await widgetFrame(page)
    await expectNoSeriousViolations(page, "host page, launcher closed, phone")

    // Tab to the launcher (past the greeting's two buttons), Enter opens it.
    for (let i = 0; i < 6 && !(await launcherFocused(page)); i++) await page.keyboard.press("Tab")
    expect(await launcherFocused(page)).toBe(true)
    await page.keyboard.press("Enter")
    await expect.poll(() => focusedLabel(frame)).toBe("Message")
    const box = (await page.locator("iframe[data-cairn-widget]").boundingBox())!
    expect([box.x, box.y, box.width, box.height]).toEqual([0, 0, 390, 844])
    expect(await background(frame, "body")).not.toBe("rgb(255, 255, 255)")
    expect(await frame.evaluate<string>(`getComputedStyle(document.documentElement).colorScheme`)).toBe("dark")

    await page.keyboard.type("Can you help?")
    await page.keyboard.press("Enter")
    await lastAnswer(frame).filter({ hasText: "Here to help." }).and(frame.locator("[data-state=\"done\"]")).waitFor()
    await screenshot(page, "widget-launcher-phone-dark")
    await expectFrameAccessible(frame, "widget, dark, phone")

    // The close button, reached by Shift+Tab from the message box, closes it; focus returns to the launcher.
    for (let i = 0; i < 4 && (await focusedLabel(frame)) !== "Close chat"; i++) await page.keyboard.press("Shift+Tab")
    expect(await focusedLabel(frame)).toBe("Close chat")
    await page.keyboard.press("Enter")
    await expect.poll(() => launcherFocused(page)).toBe(true)
    expect(await page.locator("iframe[data-cairn-widget]").isVisible()).toBe(false)
    await context.close()
  }, scaled(60_000))

  it("passes axe in the widget in light at phone width and in dark at desktop width", async () => {
    const { host } = stack
    for (const [theme, viewport] of [["light", { width: 390, height: 844 }], ["dark", { width: 1280, height: 800 }]] as const) {
      const context = await browser.newContext({ viewport })
      const page = await context.newPage()
      await page.goto(host.pageUrl({ bot: "helper", mode: "launcher", theme, greeting: "Hi" }))
      const frame = await widgetFrame(page)
      await expectNoSeriousViolations(page, `host page, ${theme}, ${viewport.width}px`)
      await launcher(page).click()
      await frame.getByLabel("Message").waitFor()
      await expectFrameAccessible(frame, `widget, ${theme}, ${viewport.width}px`)
      await context.close()
    }
  }, scaled(60_000))
})
