/**
 * A new user's first minutes with the chat, in a real Chromium against a real Cairn (PGlite) and the
 * fake LLM: setup (a refused password said in words next to its field), then a ready chat with no
 * step but typing, the view following the answer, the keyboard alone, message actions, one card for
 * a call waiting for approval, and axe-core clean in light and dark at desktop and phone widths.
 */
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { CreateBot } from "../../src/bots/Model.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { withDefaults } from "../support/client.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"
import { expectNoSeriousViolations } from "./axe.ts"

const password = "correct horse battery"
const words = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(" ")
const uuidPath = /\/chat\/[0-9a-f-]{36}$/

describe("the chat a new user lands in", () => {
  let server: TestServer
  let llm: FakeLlm
  let browser: Browser
  let context: BrowserContext
  let page: Page
  /** Where the test before left the chat: the next one opens a fresh page there. */
  let leftAt: string | undefined
  /** Any browser dialog (`prompt`, `confirm`, `alert`) the app opened: there must be none. */
  const nativeDialogs: Array<string> = []

  const freshPage = async () => {
    const opened = await context.newPage()
    opened.on("dialog", (dialog) => {
      nativeDialogs.push(`${dialog.type()}: ${dialog.message()}`)
      void dialog.dismiss()
    })
    return opened
  }

  beforeAll(async () => {
    ensureWebBuilt()
    llm = await startFakeLlm()
    server = await startServer({ backend: "pglite", env: { ...fakeLlmEnv(llm) } })
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: { width: 1100, height: 760 } })
    // Playwright's own deadline (30 s) stretches like every other on a machine busy with other work.
    context.setDefaultTimeout(scaled(30_000))
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.baseUrl })
  })
  afterAll(async () => {
    expect(nativeDialogs).toEqual([])
    await browser?.close()
    await server?.close()
    await llm?.close()
  })
  // Each test on a page of its own, opened where the one before left the chat: a test that fails
  // leaves no dialog open, no answer streaming, no focus astray for the next.
  beforeEach(async () => {
    llm.reset()
    page = await freshPage()
    if (leftAt === undefined) return
    await page.goto(leftAt)
    await composer().waitFor()
  })
  afterEach(async () => {
    if (page.url().startsWith(server.baseUrl)) leftAt = page.url()
    await page.close()
  })

  const focusedLabel = (on: Page = page) =>
    // A string, evaluated in the page: the tests compile without the DOM library.
    on.evaluate<string | undefined>(`document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.tagName`)
  const composer = (on: Page = page) => on.getByRole("textbox", { name: "Message" })
  const storedAnswers = (on: Page = page) => on.getByTestId("stored-answer")
  /** How far the message list is scrolled up from its bottom, in pixels. */
  const distanceFromBottom = (on: Page = page) =>
    on.getByTestId("messages").evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight)

  it("sets up with the password refused in words next to its field, then lands in a ready chat and answers what is typed", async () => {
    await page.goto(`${server.baseUrl}/`)
    await page.getByRole("heading", { name: "Create the first admin" }).waitFor()
    await page.getByLabel("Server API key").fill(server.apiKey)
    await page.getByLabel("Username").fill("root")
    await page.getByLabel("Password").fill("short")
    await page.getByRole("button", { name: "Create admin and sign in" }).click()
    const passwordField = page.getByRole("textbox", { name: "Password" })
    await expect.poll(() => passwordField.getAttribute("aria-invalid")).toBe("true")
    const problem = page.getByText("Password must be at least 8 characters.")
    await problem.waitFor()
    expect(await passwordField.getAttribute("aria-describedby")).toContain(await problem.getAttribute("id"))
    expect(await page.locator("main").textContent()).not.toMatch(/Expected|└|├|Encoded side/)
    await expectNoSeriousViolations(page, "setup with a refused password")

    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Create admin and sign in" }).click()
    // No channel to make, no conversation to start: the message box is ready, the cursor in it.
    await page.waitForURL(uuidPath)
    await page.getByTestId("channels").getByRole("button", { name: /^Chat · default/ }).waitFor()
    await expect.poll(() => focusedLabel()).toBe("Message")

    llm.script({ text: `Hello! ${words(40, "hi")}`, chunkDelayMs: 40 })
    await page.keyboard.type("Hello there")
    await page.keyboard.press("Enter")
    // The new conversation is listed while its first answer is still being written.
    await page.getByTestId("sessions").getByRole("link", { name: "Hello there" }).waitFor()
    expect(await page.locator("[data-testid=live-answer][aria-busy=true]").count()).toBe(1)
    await storedAnswers().filter({ hasText: "hi39" }).waitFor()
    expect(await focusedLabel()).toBe("Message")
  })

  it("reopens the channel and conversation left last, on return and after a reload", async () => {
    const left = page.url()
    await page.goto(`${server.baseUrl}/`)
    await page.waitForURL(left)
    await storedAnswers().filter({ hasText: "hi39" }).waitFor()
    const again = await context.newPage()
    await again.goto(`${server.baseUrl}/`)
    await again.waitForURL(left)
    await storedAnswers(again).filter({ hasText: "hi39" }).waitFor()
    await again.close()
  })

  it("makes channels in an inline dialog, with a refused name said next to the field", async () => {
    await server.call((client) =>
      client.bots.create({
        payload: withDefaults(CreateBot)({
          id: "guarded",
          name: "Guarded",
          tools: ["current_time"],
          tool_policies: { current_time: "require_approval" }
        })
      })
    )
    await page.reload()
    await page.getByRole("button", { name: "New channel" }).click()
    const dialog = page.getByRole("dialog", { name: "New channel" })
    await dialog.getByLabel("Name").fill("   ")
    await dialog.getByRole("button", { name: "Create" }).click()
    await dialog.getByText("Name must not be blank.").waitFor()
    expect(await dialog.getByRole("textbox", { name: "Name" }).getAttribute("aria-invalid")).toBe("true")
    await expectNoSeriousViolations(page, "new channel dialog with a refused name")
    await dialog.getByLabel("Name").fill("Careful")
    await dialog.getByLabel("Bot").selectOption("guarded")
    await dialog.getByRole("button", { name: "Create" }).click()
    await dialog.waitFor({ state: "hidden" })
    // The new channel opens on a new conversation, ready to type in.
    await expect.poll(() => page.getByTestId("chat-channel").textContent()).toBe("Careful")
    await page.waitForURL(uuidPath)
  })

  it("shows a call waiting for approval once, and the answer after Approve", async () => {
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "Ran it." })
    await composer().fill("Check the clock")
    await composer().press("Enter")
    const decide = page.getByRole("group", { name: "Approve current_time?" })
    await decide.waitFor()
    expect(await page.getByTestId("live-answer").getByTestId("tool-card").count()).toBe(1)
    await expectNoSeriousViolations(page, "a call waiting for approval")
    await decide.getByRole("button", { name: "Approve" }).click()
    await storedAnswers().filter({ hasText: "Ran it." }).waitFor()
  })

  it("follows the answer unless the reader scrolls up, then offers to jump to the latest", async () => {
    await page.keyboard.press("Control+Shift+O")
    await expect.poll(() => page.getByTestId("messages").textContent()).not.toContain("Ran it.")
    llm.script({ text: words(400, "w"), chunkDelayMs: 25 })
    await composer().fill("Write a lot")
    await composer().press("Enter")
    await page.getByTestId("live-answer").filter({ hasText: "w120 " }).waitFor()
    await expect.poll(() => distanceFromBottom()).toBeLessThan(48)
    // Scrolled up: the view stays where the reader is, and a button offers the latest.
    await page.getByTestId("messages").hover()
    await page.mouse.wheel(0, -5000)
    const jump = page.getByRole("button", { name: "Jump to latest" })
    await jump.waitFor()
    await expect.poll(() => page.getByTestId("messages").evaluate((element) => element.scrollTop)).toBe(0)
    await page.getByTestId("live-answer").filter({ hasText: "w200 " }).waitFor()
    expect(await page.getByTestId("messages").evaluate((element) => element.scrollTop)).toBe(0)
    await jump.click()
    await jump.waitFor({ state: "hidden" })
    await expect.poll(() => distanceFromBottom()).toBeLessThan(48)
    expect(await focusedLabel()).toBe("Message")
    await storedAnswers().filter({ hasText: "w399" }).waitFor()
  })

  it("shows the live answer in view after a reload in the middle of it", async () => {
    llm.script({ text: words(300, "r"), chunkDelayMs: 40 })
    await composer().fill("And more")
    await composer().press("Enter")
    await page.getByTestId("live-answer").filter({ hasText: "r20 " }).waitFor()
    await page.reload()
    await page.locator("[data-testid=live-answer][aria-busy=true]").filter({ hasText: "r60 " }).waitFor()
    await expect.poll(() => distanceFromBottom()).toBeLessThan(48)
    await storedAnswers().filter({ hasText: "r299" }).waitFor()
    await expect.poll(() => distanceFromBottom()).toBeLessThan(48)
  })

  it("works from the keyboard alone: a skip link to the message box, Escape stops, ? lists the shortcuts", async () => {
    await page.goto(`${server.baseUrl}/`)
    await page.waitForURL(uuidPath)
    await storedAnswers().first().waitFor()
    // From the top of the page, as a keyboard user arriving (the body is where Tab starts).
    await page.evaluate(`document.body.tabIndex = -1; document.body.focus(); document.body.removeAttribute("tabindex")`)
    await page.keyboard.press("Tab")
    expect(await page.evaluate<string | undefined>(`document.activeElement?.textContent`)).toBe("Skip to content")
    await page.keyboard.press("Enter")
    expect(await focusedLabel()).toBe("Message")

    llm.script({ text: words(300, "s"), chunkDelayMs: 50 })
    await page.keyboard.type("Go on")
    await page.keyboard.press("Enter")
    await page.getByTestId("live-answer").filter({ hasText: "s5 " }).waitFor()
    await page.keyboard.press("Escape")
    await storedAnswers().filter({ hasText: "Stopped" }).waitFor()
    expect(await focusedLabel()).toBe("Message")

    await page.keyboard.press("Shift+Tab")
    await page.keyboard.press("?")
    const help = page.getByRole("dialog", { name: "Keyboard shortcuts" })
    await help.getByText("Start a new conversation").waitFor()
    await expectNoSeriousViolations(page, "keyboard shortcuts")
    await page.keyboard.press("Escape")
    await help.waitFor({ state: "hidden" })
    await page.keyboard.press("Shift+Escape")
    expect(await focusedLabel()).toBe("Message")
  })

  it("copies a message and each code block, shows when each was written, and retries a failed answer", async () => {
    await page.keyboard.press("Control+Shift+O")
    await page.waitForURL(uuidPath)
    llm.script({ text: "Use this:\n\n```js\nconst answer = 42\n```\n\nDone." })
    await composer().fill("Some code please")
    await composer().press("Enter")
    const answer = storedAnswers().filter({ hasText: "Done." })
    await answer.waitFor()
    await answer.getByRole("button", { name: "Copy code" }).click()
    await expect.poll(() => page.evaluate<string>(`navigator.clipboard.readText()`)).toBe("const answer = 42\n")
    await answer.getByRole("button", { name: "Copy message" }).click()
    await expect.poll(() => page.evaluate<string>(`navigator.clipboard.readText()`)).toContain("```js\nconst answer = 42\n```")
    const written = answer.locator("time")
    expect(Number.isNaN(Date.parse((await written.getAttribute("datetime")) ?? ""))).toBe(false)
    expect(await written.getAttribute("title")).toBeTruthy()

    llm.script({ status: 400, errorBody: { error: { message: "The model refused", type: "invalid_request_error", code: "bad" } } })
    await composer().fill("Try this")
    await composer().press("Enter")
    const retry = page.getByTestId("live-answer").getByRole("button", { name: "Retry" })
    await retry.waitFor()
    llm.script({ text: "Second time lucky." })
    await retry.click()
    await storedAnswers().filter({ hasText: "Second time lucky." }).waitFor()
  })

  it("pins, archives and finds conversations from the sidebar", async () => {
    const list = page.getByTestId("sessions")
    await list.getByRole("button", { name: "Pin Some code please" }).click()
    // The conversation may already be first by recency: wait for the pin itself, not for the order.
    await expect.poll(() => list.getByRole("link").first().textContent()).toContain("Pinned:")
    expect(await list.getByRole("link").first().textContent()).toContain("Some code please")
    await list.getByRole("button", { name: "Archive Write a lot" }).click()
    await list.getByRole("link", { name: "Write a lot" }).waitFor({ state: "detached" })
    await page.getByRole("button", { name: "Show archived" }).click()
    await list.getByRole("button", { name: "Restore Write a lot" }).click()
    await list.getByRole("link", { name: "Write a lot" }).waitFor({ state: "detached" })
    await page.getByRole("button", { name: "Back to conversations" }).click()
    await list.getByRole("link", { name: "Write a lot" }).waitFor()

    // Search: the server's full text over every message; Ctrl+K puts the cursor there.
    await page.keyboard.press("Control+k")
    await expect.poll(() => page.evaluate<string | undefined>(`document.activeElement?.getAttribute("data-testid")`)).toBe("chat-search")
    await page.keyboard.type("w399")
    const found = page.getByTestId("search-results").getByRole("link", { name: /Write a lot/ })
    await found.waitFor()
    expect(await found.textContent()).toContain("w399")
    await expectNoSeriousViolations(page, "search results")
    await found.click()
    await storedAnswers().filter({ hasText: "w399" }).waitFor()
    await page.getByTestId("search-results").waitFor({ state: "detached" })
  })

  it("has no serious or critical axe-core violation on the sign-in page, in light and dark, at desktop and phone widths", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      for (const viewport of [{ width: 1100, height: 760 }, { width: 390, height: 800 }]) {
        const signedOut = await browser.newContext({ viewport, colorScheme })
        const signIn = await signedOut.newPage()
        await signIn.goto(`${server.baseUrl}/`)
        await signIn.getByRole("heading", { name: "Sign in to Cairn" }).waitFor()
        await expectNoSeriousViolations(signIn, `sign-in, ${colorScheme}, ${viewport.width} px`)
        await signedOut.close()
      }
    }
  })

  it("has no serious or critical axe-core violation in light and dark, at desktop and phone widths", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      for (const viewport of [{ width: 1100, height: 760 }, { width: 390, height: 800 }]) {
        await page.emulateMedia({ colorScheme })
        await page.setViewportSize(viewport)
        await storedAnswers().filter({ hasText: "w399" }).waitFor()
        await expectNoSeriousViolations(page, `chat, ${colorScheme}, ${viewport.width} px`)
      }
    }
    await page.emulateMedia({ colorScheme: "light" })
    await page.setViewportSize({ width: 1100, height: 760 })
  })
})
