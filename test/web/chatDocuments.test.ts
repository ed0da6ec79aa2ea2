/**
 * Documents in the chat, in a real Chromium against a real Cairn (PGlite) and the fake LLM: a
 * Markdown file dropped into the composer shows as a chip (uploading, reading, ready), the
 * conversation says it was added, and the bot's answer is given its passages; a file with no text is
 * refused in words on its chip; a document is removed from the chip. axe-core clean in light and
 * dark at desktop and phone widths with the chips shown.
 */
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { scaled, until } from "../support/time.ts"
import { expectNoSeriousViolations } from "./axe.ts"
import { screenshot, setUpThroughPage } from "./support.ts"

const password = "correct horse battery"
const uuidPath = /\/chat\/([0-9a-f-]{36})$/
const secret = "ORCHID-42"

/** Drops a file on the composer the way a browser does. */
const drop = (page: Page, file: { name: string; type: string; text: string }) =>
  page.evaluate((file) => {
    // Runs in the page (the tests' own types have no DOM).
    const { document, DataTransfer, DragEvent } = globalThis as any
    const data = new DataTransfer()
    data.items.add(new File([file.text], file.name, { type: file.type }))
    document.querySelector("[data-testid=\"composer\"]").dispatchEvent(
      new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true })
    )
  }, file)

describe("documents in the chat", () => {
  let server: TestServer
  let llm: FakeLlm
  let browser: Browser
  let context: BrowserContext
  let page: Page

  beforeAll(async () => {
    ensureWebBuilt()
    llm = await startFakeLlm()
    server = await startServer({ backend: "pglite", env: { ...fakeLlmEnv(llm) } })
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: { width: 1100, height: 760 } })
    context.setDefaultTimeout(scaled(30_000))
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await llm?.close()
  })

  const composer = () => page.getByRole("textbox", { name: "Message" })
  const chips = () => page.getByTestId("session-documents").getByRole("listitem")

  it("adds a dropped Markdown file to the conversation and gives the bot its passages", async () => {
    await setUpThroughPage(page, server.baseUrl, server.apiKey, "root", password)
    await page.waitForURL(uuidPath)
    await composer().waitFor()
    await drop(page, {
      name: "zephyr.md",
      type: "text/markdown",
      text: `# Zephyr launch plan\n\nThe zephyr launch code is ${secret}. Keep the launch code safe.\n`
    })
    await chips().filter({ hasText: "zephyr.md" }).and(page.locator("[data-state=ready]")).waitFor()
    await page.getByRole("status").filter({ hasText: "zephyr.md was added to this conversation" }).waitFor()
    // A file with nothing in it: refused in words on its chip.
    await drop(page, { name: "blank.txt", type: "text/plain", text: "   \n" })
    const refused = chips().filter({ hasText: "blank.txt" })
    await refused.and(page.locator("[data-state=failed]")).waitFor()
    expect(await refused.textContent()).toContain("blank.txt is empty")
    await screenshot(page, "chat-documents")

    llm.script({ text: `The code is ${secret}.` })
    await composer().fill("What is the zephyr launch code?")
    await composer().press("Enter")
    await page.getByTestId("stored-answer").filter({ hasText: `The code is ${secret}.` }).waitFor()
    expect(JSON.stringify(llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages)).toContain(`launch code is ${secret}`)

    for (const colorScheme of ["light", "dark"] as const) {
      for (const viewport of [{ width: 1100, height: 760 }, { width: 390, height: 800 }]) {
        await page.emulateMedia({ colorScheme })
        await page.setViewportSize(viewport)
        await chips().first().waitFor()
        await expectNoSeriousViolations(page, `documents in the chat, ${colorScheme}, ${viewport.width} px`)
      }
    }
    await page.setViewportSize({ width: 1100, height: 760 })
    await page.emulateMedia({ colorScheme: "light" })
  })

  it("lists the conversation's documents when it opens again, and removes one from its chip", async () => {
    const sessionId = uuidPath.exec(page.url())![1]!
    await page.reload()
    await chips().filter({ hasText: "zephyr.md" }).and(page.locator("[data-state=ready]")).waitFor()
    expect(await chips().filter({ hasText: "blank.txt" }).count()).toBe(0)
    await page.getByRole("button", { name: "Remove zephyr.md" }).click()
    await chips().filter({ hasText: "zephyr.md" }).waitFor({ state: "detached" })
    await until(
      async () => json(await server.request(`/api/v1/sessions/${sessionId}/documents`)),
      (documents: ReadonlyArray<unknown>) => documents.length === 0,
      20_000,
      "the document removed on the server"
    )
  })
})
