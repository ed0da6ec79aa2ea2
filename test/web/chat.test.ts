/**
 * The chat in a real Chromium against a real Cairn (PGlite) and the fake LLM: an answer streams in
 * as markdown (code highlighted, links safe), a tool call shows as a card, approvals are decided
 * inline, Stop cancels, and a reload or a second tab in the middle of an answer rejoins the run and
 * shows the answer once, whole.
 */
import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { CreateBot } from "../../src/bots/Model.ts"
import { Sessions } from "../../src/sessions/Sessions.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { withDefaults } from "../support/client.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { screenshot, signInThroughPage } from "./support.ts"

const botRequest = withDefaults(CreateBot)
const password = "correct horse battery"
const words = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(" ")

describe("web app chat", () => {
  let server: TestServer
  let llm: FakeLlm
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    ensureWebBuilt()
    llm = await startFakeLlm()
    server = await startServer({ backend: "pglite", env: { ...fakeLlmEnv(llm) } })
    await server.request("/auth/setup", { method: "POST", body: JSON.stringify({ username: "root", password }) })
    await server.call((client) => client.bots.create({ payload: botRequest({ id: "helper", name: "Helper", tools: ["current_time"] }) }))
    await server.call((client) =>
      client.bots.create({
        payload: botRequest({
          id: "guarded",
          name: "Guarded",
          tools: ["current_time"],
          tool_policies: { current_time: "require_approval" }
        })
      })
    )
    browser = await launchBrowser()
    page = await (await browser.newContext({ viewport: { width: 1100, height: 760 } })).newPage()
    await signInThroughPage(page, server.baseUrl, "root", password)
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  const newChannel = async (name: string, bot: string) => {
    await page.getByRole("button", { name: "New channel" }).click()
    const dialog = page.getByRole("dialog", { name: "New channel" })
    await dialog.getByLabel("Name").fill(name)
    await dialog.getByLabel("Bot").selectOption(bot)
    await dialog.getByRole("button", { name: "Create" }).click()
    const item = page.getByTestId("channels").getByRole("button", { name: new RegExp(`^${name} ·`) })
    await item.waitFor()
    await item.click()
  }
  const newConversation = async () => {
    await page.getByRole("button", { name: "New conversation" }).click()
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/)
  }
  const send = async (text: string, on: Page = page) => {
    await on.getByRole("textbox", { name: "Message", exact: true }).fill(text)
    await on.getByRole("textbox", { name: "Message", exact: true }).press("Enter")
  }
  const storedAnswers = (on: Page = page) => on.getByTestId("stored-answer")

  it("streams an answer as markdown with highlighted code and safe links", async () => {
    await newChannel("Everyday", "helper")
    await newConversation()
    const answer =
      "Here is **bold** text and [a site](https://example.com) and [a trap](javascript:alert(1)).\n\n```js\nconst answer = 42\n```\n" +
      words(30, "tail")
    llm.script({ text: answer, chunkDelayMs: 40 })
    await send("Show me some markdown")
    // Part of the answer is on the page while the run is still going.
    const live = page.getByTestId("live-answer")
    await live.filter({ hasText: "bold" }).waitFor()
    expect(await live.getAttribute("aria-busy")).toBe("true")
    await storedAnswers().filter({ hasText: "tail29" }).waitFor()
    const stored = storedAnswers().last()
    expect(await stored.locator("strong").textContent()).toBe("bold")
    const link = stored.locator("a", { hasText: "a site" })
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer")
    expect(await link.getAttribute("target")).toBe("_blank")
    expect(await stored.locator("a", { hasText: "a trap" }).getAttribute("href")).toBeNull()
    await stored.locator("pre code .hljs-keyword").first().waitFor()
    expect(await page.getByTestId("sessions").getByRole("link", { name: "Show me some markdown" }).count()).toBe(1)
    await screenshot(page, "chat")
  })

  it("fits a phone's width: the sidebar folds behind a menu button", async () => {
    await page.setViewportSize({ width: 390, height: 800 })
    const sidebar = page.getByRole("navigation", { name: "Channels and conversations" })
    await sidebar.waitFor({ state: "hidden" })
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(390)
    await screenshot(page, "phone")
    await page.getByRole("button", { name: "Menu" }).click()
    await sidebar.waitFor({ state: "visible" })
    await page.getByRole("button", { name: "Menu" }).click()
    await sidebar.waitFor({ state: "hidden" })
    await page.setViewportSize({ width: 1100, height: 760 })
    await sidebar.waitFor({ state: "visible" })
  })

  it("shows a tool call as a card with its arguments, result and duration", async () => {
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "It is late." })
    await send("What time is it?")
    await storedAnswers().filter({ hasText: "It is late." }).waitFor()
    const card = page.getByTestId("tool-card").last()
    expect(await card.locator(".tool-name").textContent()).toBe("current_time")
    await card.locator("summary").click()
    await card.getByText("Result").waitFor()
    expect(await card.locator("pre").count()).toBe(2)
    await screenshot(page, "tool-card")
  })

  it("sends an attached image with a model picked for that message: the provider gets both", async () => {
    const created = await server.request("/api/v1/admin/providers", {
      method: "POST",
      body: JSON.stringify({ id: "second", base_url: llm.url, api_key: "sk-second-provider-key", models: [{ id: "fake-large" }] })
    })
    expect(created.status).toBe(201)
    await newConversation()
    // The picker lists the stored provider's model by the id a chat names it with.
    await page.getByLabel("Model").selectOption("second/fake-large")
    const png = await page.screenshot({ clip: { x: 0, y: 0, width: 12, height: 12 } })
    await page.getByTestId("composer-file").setInputFiles({ name: "pixel.png", mimeType: "image/png", buffer: png })
    await page.getByRole("img", { name: "pixel.png" }).waitFor()
    llm.script({ text: "A small picture." })
    await send("What is in it?")
    await storedAnswers().filter({ hasText: "A small picture." }).waitFor()
    const request = llm.requestsTo("/v1/chat/completions").at(-1)!
    const body = request.body as { model: string; messages: Array<unknown> }
    expect(body.model).toBe("fake-large")
    expect(JSON.stringify(body.messages)).toContain(`data:image/png;base64,${png.toString("base64")}`)
  })

  for (const approved of [true, false]) {
    it(`asks for approval inline and honours ${approved ? "Approve" : "Deny"}`, async () => {
      if (approved) await newChannel("Careful", "guarded")
      await newConversation()
      llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: approved ? "Ran it." : "Did not run it." })
      await send("Check the clock")
      const decide = page.getByRole("group", { name: "Approve current_time?" })
      await decide.waitFor()
      if (approved) await screenshot(page, "approval")
      await decide.getByRole("button", { name: approved ? "Approve" : "Deny" }).click()
      await storedAnswers().filter({ hasText: approved ? "Ran it." : "Did not run it." }).waitFor()
      const decided = await server.call((client) => client.chat.approvals({ urlParams: { status: approved ? "approved" : "denied" } }))
      expect(decided.length).toBe(1)
      // The model saw the tool's result only when it was approved.
      const toolMessage = JSON.stringify(llm.requestsTo("/v1/chat/completions").at(-1)!.body)
      expect(toolMessage.includes("time_zone")).toBe(approved)
      expect(toolMessage.includes("did not approve")).toBe(!approved)
    })
  }

  it("stops an answer with Stop; the partial answer is kept, marked stopped", async () => {
    await newConversation()
    llm.script({ text: words(200, "slow"), chunkDelayMs: 60 })
    await send("Write a lot")
    await page.getByTestId("live-answer").filter({ hasText: "slow3" }).waitFor()
    await page.getByRole("button", { name: "Stop" }).click()
    await storedAnswers().filter({ hasText: "Stopped" }).waitFor()
    expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(0)
    const text = (await storedAnswers().last().textContent()) ?? ""
    expect(text).toContain("slow3")
    expect(text).not.toContain("slow199")
  })

  it("rejoins an answer after a reload and in a second tab, and shows it once, whole", async () => {
    await newConversation()
    const answer = words(60, "w")
    llm.script({ text: answer, chunkDelayMs: 80 })
    await send("Tell me sixty words")
    await page.getByTestId("live-answer").filter({ hasText: "w5 " }).waitFor()
    const url = page.url()
    await page.reload()
    // Back on the page while the run goes on: the answer is followed live, not read back stored.
    await page.locator("[data-testid=live-answer][aria-busy=true]").waitFor()
    const second = await page.context().newPage()
    await second.goto(url)
    for (const tab of [page, second]) {
      await storedAnswers(tab).filter({ hasText: "w59" }).waitFor()
      const messages = (await tab.getByTestId("messages").textContent()) ?? ""
      expect(messages.split("w17 ").length - 1).toBe(1)
      expect(messages).toContain(answer)
      expect(await tab.getByTestId("live-answer").count()).toBe(0)
    }
    await second.close()
  })

  it("opens a conversation of 200 messages, markdown and code included, and says how long it took", async () => {
    const { session_id: sessionId } = await server.call((client) =>
      client.sessions.create({ payload: { bot_id: "helper", client_id: "long-history" } })
    )
    await server.run(
      Effect.flatMap(Sessions, (sessions) =>
        Effect.forEach(Array.from({ length: 100 }, (_, i) => i), (i) =>
          Effect.zipRight(
            sessions.append(sessionId, { role: "user", content: `Question ${i}: how does part ${i} work?` }),
            sessions.append(sessionId, {
              role: "assistant",
              content: `Part **${i}** works like this:\n\n- one\n- two\n\n\`\`\`ts\nconst part${i} = ${i}\n\`\`\`\nAnswer ${i} ends here.`
            })
          )))
    )
    const cold = await browser.newContext({ viewport: { width: 1100, height: 760 } })
    const fresh = await cold.newPage()
    await signInThroughPage(fresh, server.baseUrl, "root", password)
    // A cold load: a new page (the app's files from the server, not this page's memory).
    await fresh.close()
    const timed = await cold.newPage()
    const started = Date.now()
    await timed.goto(`${server.baseUrl}/chat/${sessionId}`)
    await timed.getByTestId("stored-answer").filter({ hasText: "Answer 99 ends here." }).waitFor()
    const elapsed = Date.now() - started
    expect(await timed.getByTestId("stored-answer").count()).toBe(100)
    // As markdown: the last answer's list, and its code block highlighted.
    const last = timed.getByTestId("stored-answer").last()
    expect(await last.locator("li").count()).toBe(2)
    await last.locator("pre code .hljs-keyword").first().waitFor()
    // Reported for bench/README.md ("a cold load of 200 messages"), not asserted: the target
    // is 1 s, and how long it takes is the machine's (a busy one took 7 s), not the app's behaviour.
    console.log(`cold load of a 200-message conversation: ${elapsed} ms`)
    await cold.close()
  })
})
