/**
 * What a user does with a conversation beyond typing, in a real Chromium against a real Cairn
 * (PGlite) and the fake LLM: regenerate an answer and edit a question (each a branch, both kept as
 * versions, `‹ 1/2 ›`), tokens on hover, math and diagrams drawn, the conversation's own model,
 * instructions and temperature, export as Markdown and JSON and import again, every conversation of
 * the user's listed (the CLI's too), and a badge on content from outside. Keyboard alone for the
 * edit; axe-core clean in light and dark at desktop and phone widths.
 */
import { readFileSync } from "node:fs"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { LoginRequest } from "../../src/access/users/Model.ts"
import { ChatRequest } from "../../src/intake/Model.ts"
import { type FakeLlm, fakeLlmEnv, type FakeReply, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { withDefaults } from "../support/client.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"
import { expectNoSeriousViolations } from "./axe.ts"
import { screenshot, setUpThroughPage } from "./support.ts"

const password = "correct horse battery"
const uuidPath = /\/chat\/([0-9a-f-]{36})$/

describe("versions, settings, export and import in the chat", () => {
  let server: TestServer
  let llm: FakeLlm
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let leftAt: string | undefined

  beforeAll(async () => {
    ensureWebBuilt()
    llm = await startFakeLlm()
    server = await startServer({ backend: "pglite", env: { ...fakeLlmEnv(llm) } })
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: { width: 1100, height: 760 }, acceptDownloads: true })
    context.setDefaultTimeout(scaled(30_000))
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await llm?.close()
  })
  // A page of its own per test, where the one before left the chat.
  beforeEach(async () => {
    llm.reset()
    page = await context.newPage()
    if (leftAt === undefined) return
    await page.goto(leftAt)
    await composer().waitFor()
  })
  afterEach(async () => {
    if (page.url().startsWith(server.baseUrl)) leftAt = page.url()
    await page.close()
  })

  const composer = () => page.getByRole("textbox", { name: "Message" })
  const answers = () => page.getByTestId("stored-answer")
  const sessionIdOf = () => uuidPath.exec(page.url())?.[1] ?? ""
  const ask = async (text: string, ...replies: ReadonlyArray<FakeReply>) => {
    llm.script(...replies)
    await composer().fill(text)
    await composer().press("Enter")
  }

  it("regenerates an answer and edits a question, each a version the other is reachable from", async () => {
    await setUpThroughPage(page, server.baseUrl, server.apiKey, "root", password)
    await page.waitForURL(uuidPath)
    await ask("Name a colour", { text: "Blue." })
    await answers().filter({ hasText: "Blue." }).waitFor()
    const first = sessionIdOf()

    llm.script({ text: "Green." })
    await answers().filter({ hasText: "Blue." }).getByRole("button", { name: "Regenerate answer" }).click()
    await answers().filter({ hasText: "Green." }).waitFor()
    expect(sessionIdOf()).not.toBe(first)
    const versions = page.getByRole("group", { name: "Version 2 of 2" })
    await versions.waitFor()
    expect(await answers().filter({ hasText: "Blue." }).count()).toBe(0)
    await screenshot(page, "chat-versions")
    await versions.getByRole("button", { name: "Previous version" }).click()
    await page.waitForURL(new RegExp(first))
    await answers().filter({ hasText: "Blue." }).waitFor()
    await page.getByRole("group", { name: "Version 1 of 2" }).waitFor()

    // Edit from the keyboard alone: to the Edit button, Enter, the text changed, Enter sends it.
    await page.getByRole("button", { name: "Edit message" }).focus()
    await page.keyboard.press("Enter")
    const editor = page.getByRole("textbox", { name: "Edit message" })
    await expect.poll(() => page.evaluate<string | undefined>(`document.activeElement?.getAttribute("aria-label")`)).toBe("Edit message")
    await editor.fill("Name a fruit")
    llm.script({ text: "Apple." })
    await page.keyboard.press("Enter")
    await answers().filter({ hasText: "Apple." }).waitFor()
    await page.getByRole("group", { name: "Version 3 of 3" }).waitFor()
    expect(JSON.stringify(llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages)).not.toContain("colour")
    await expectNoSeriousViolations(page, "a conversation with versions")
  })

  it("shows an answer's tokens on hover, draws its math and its diagram", async () => {
    await page.keyboard.press("Control+Shift+O")
    await ask("Explain", {
      text:
        "Euler: $e^{i\\pi} + 1 = 0$ and\n\n$$\\int_0^1 x\\,dx = \\tfrac{1}{2}$$\n\n```mermaid\ngraph TD\n  A[Ask] --> B[Answer]\n```\n\nCosts $5 and $10.",
      usage: { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 }
    })
    const answer = answers().filter({ hasText: "Euler" })
    await answer.waitFor()
    await answer.locator(".math-inline .katex").waitFor()
    await answer.locator(".math-block .katex-display").waitFor()
    await answer.getByTestId("diagram").locator("svg").waitFor()
    expect(await answer.textContent()).toContain("Costs $5 and $10.")
    expect(await answer.getByTestId("message-model").getAttribute("title")).toContain("12 tokens in, 34 out")
    await screenshot(page, "chat-math-diagram")
    await expectNoSeriousViolations(page, "math and a diagram")
  })

  it("keeps the conversation's own model, instructions and temperature, and the run uses them", async () => {
    await page.getByRole("button", { name: "Settings" }).click()
    const dialog = page.getByRole("dialog", { name: "Conversation settings" })
    const model = dialog.getByLabel("Model")
    if ((await model.evaluate((element) => element.tagName)) === "SELECT") await model.selectOption({ index: 1 })
    else await model.fill("fake-chosen")
    const chosen = await model.inputValue()
    await dialog.getByLabel("Instructions").fill("Answer in French.")
    await dialog.getByLabel("Temperature").fill("5")
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.getByText(/Temperature/).first().waitFor()
    expect(await dialog.getByLabel("Temperature").getAttribute("aria-invalid")).toBe("true")
    await expectNoSeriousViolations(page, "conversation settings with a refused temperature")
    await dialog.getByLabel("Temperature").fill("0.2")
    await screenshot(page, "chat-settings")
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })

    await ask("Bonjour?", { text: "Oui." })
    await answers().filter({ hasText: "Oui." }).waitFor()
    const request = llm.requestsTo("/v1/chat/completions").at(-1)!.body
    expect(request.model).toBe(chosen.includes("/") ? chosen.split("/").at(-1) : chosen)
    expect(request.temperature).toBe(0.2)
    expect(request.messages[0].content).toContain("Answer in French.")
  })

  it("exports as Markdown and JSON with the tool calls, and imports the JSON as a new conversation", async () => {
    const [markdown] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export Markdown" }).click()])
    const text = readFileSync((await markdown.path())!, "utf8")
    expect(text).toContain("### User")
    expect(text).toContain("Bonjour?")
    const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export JSON" }).click()])
    const file = (await json.path())!
    expect(JSON.parse(readFileSync(file, "utf8")).format).toBe("cairn.session/1")
    const before = sessionIdOf()
    await page.getByTestId("import-conversation").setInputFiles({
      name: "bonjour.json",
      mimeType: "application/json",
      buffer: readFileSync(file)
    })
    await expect.poll(() => sessionIdOf()).not.toBe(before)
    await answers().filter({ hasText: "Oui." }).waitFor()
  })

  it("lists every conversation of the user's, the CLI's too, and marks content from outside", async () => {
    const session = sessionIdOf()
    llm.script({ text: "Noted." })
    await server.call((client) =>
      client.injection.inject({
        path: { id: session },
        payload: { content: "A mail arrived: invoice due.", source: "mail", run_agent: false, notify: false }
      })
    )
    await page.reload()
    const badge = page.getByTestId("origin-badge").first()
    await badge.waitFor()
    expect(await badge.textContent()).toContain("from an email")

    // A conversation the user had in a terminal (signed in as themselves, as the CLI does), under another client id.
    const { access_token } = await server.call((client) => client.auth.login({ payload: new LoginRequest({ username: "root", password }) }))
    llm.script({ text: "From the terminal." })
    await server.as(access_token).call((client) =>
      client.chat.chat({
        payload: withDefaults(ChatRequest)({ message: "typed in a terminal", client_id: "cli", session_id: crypto.randomUUID() })
      })
    )
    await page.getByRole("button", { name: "All my conversations" }).click()
    const list = page.getByTestId("sessions")
    await list.getByRole("link", { name: "Explain" }).first().waitFor()
    await list.getByRole("link", { name: "typed in a terminal" }).waitFor()
    await expectNoSeriousViolations(page, "all my conversations, a badge on outside content")
    await page.getByRole("button", { name: "This channel only" }).click()
  })

  it("has no serious or critical axe-core violation in light and dark, at desktop and phone widths", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      for (const viewport of [{ width: 1100, height: 760 }, { width: 390, height: 800 }]) {
        await page.emulateMedia({ colorScheme })
        await page.setViewportSize(viewport)
        await answers().first().waitFor()
        await expectNoSeriousViolations(page, `chat with its tools, ${colorScheme}, ${viewport.width} px`)
      }
    }
  })
})
