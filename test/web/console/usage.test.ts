/**
 * The usage page in Chromium: chats with the fake LLM (which reports usage) made as two callers
 * with two bots on two models; the tokens chart draws one bar per day, bot, model or key (counted
 * in the canvas's pixels, beside the table with the same figures), and a date range without the
 * usage leaves neither bars nor rows.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CreateBot } from "../../../src/bots/Model.ts"
import { ChatRequest } from "../../../src/chat/Model.ts"
import { withDefaults } from "../../support/client.ts"
import { screenshot } from "../support.ts"
import { type Console, expectFitsPhone, openPage, startConsole } from "./support.ts"

const botRequest = withDefaults(CreateBot)
const chatRequest = withDefaults(ChatRequest)

/**
 * The bars the tokens chart drew: runs of the prompt series' colour (the bottom of each stacked
 * bar) along a pixel row just above the chart's base (the lowest such pixel), where every bar is.
 * The legend's swatch of that colour sits at the top: a lowest pixel in the top half is no bar.
 */
const barsDrawn = (page: Page) =>
  page.locator("canvas[aria-label^='Tokens by']").evaluate((element) => {
    // The DOM's types are not in the tests' lib: the canvas as far as this reads it.
    const canvas = element as unknown as {
      width: number
      height: number
      getContext: (kind: "2d") => { getImageData: (x: number, y: number, w: number, h: number) => { data: ArrayLike<number> } }
    }
    const { width, height } = canvas
    const pixels = canvas.getContext("2d").getImageData(0, 0, width, height).data
    const prompt = [0x4e, 0x79, 0xa7]
    const isPrompt = (x: number, y: number) => {
      const at = (y * width + x) * 4
      return prompt.every((value, i) => Math.abs(pixels[at + i]! - value) <= 6) && pixels[at + 3]! > 200
    }
    let base = -1
    for (let y = height - 1; y >= 0 && base < 0; y--) for (let x = 0; x < width && base < 0; x++) if (isPrompt(x, y)) base = y
    if (base < height / 2) return 0
    const row = base - 1
    let runs = 0
    let run = 0
    for (let x = 0; x <= width; x++) {
      if (x < width && isPrompt(x, row)) run++
      else {
        if (run >= 4) runs++
        run = 0
      }
    }
    return runs
  })

describe("console: usage", () => {
  let app: Console
  beforeAll(async () => {
    app = await startConsole()
    const { server } = app
    await server.call((client) => client.bots.create({ payload: botRequest({ id: "alpha", name: "Alpha", model: "fake-model" }) }))
    await server.call((client) => client.bots.create({ payload: botRequest({ id: "beta", name: "Beta", model: "fake-model-2" }) }))
    const key = await server.call((client) => client.apiKeys.create({ payload: { name: "Reporter", scopes: ["chat", "bots:read"] } }))
    // The static key chats with both bots; the scoped key with alpha.
    await server.call((client) =>
      client.chat.chat({ payload: chatRequest({ message: "one two three", bot_id: "alpha", client_id: "usage-a" }) })
    )
    await server.call((client) =>
      client.chat.chat({ payload: chatRequest({ message: "four five", bot_id: "beta", client_id: "usage-b" }) })
    )
    await server.as(key.key).call((client) =>
      client.chat.chat({ payload: chatRequest({ message: "six", bot_id: "alpha", client_id: "usage-c" }) })
    )
  }, 240_000) // The server, a browser and three chats: slow on a loaded machine.
  afterAll(async () => {
    await app?.close()
  })

  it("charts tokens by day, bot, model and key, with the table, and drops what the range excludes", async () => {
    const { page, server } = app
    const report = await server.call((client) => client.usage.report({ urlParams: {} }))
    expect(report.totals.calls).toBe(3)
    expect(report.totals.total_tokens).toBeGreaterThan(0)

    await openPage(page, "Usage")
    const table = page.getByRole("table", { name: /^Usage by/ })
    const bodyRows = table.locator("tbody tr")
    const today = new Date().toISOString().slice(0, 10)

    // By day (the default): one bar, today, with the report's tokens.
    await table.getByRole("rowheader", { name: today }).waitFor()
    expect(await bodyRows.count()).toBe(1)
    expect(await bodyRows.first().getByRole("cell").nth(3).textContent()).toBe(report.totals.total_tokens.toLocaleString("en-US"))
    await expect.poll(() => barsDrawn(page)).toBe(1)

    const groupBy = page.getByLabel("Group by")
    await groupBy.selectOption("Bot")
    await table.getByRole("rowheader", { name: "beta" }).waitFor()
    expect(await table.getByRole("rowheader").allTextContents()).toEqual(expect.arrayContaining(["alpha", "beta"]))
    expect(await bodyRows.count()).toBe(2)
    await expect.poll(() => barsDrawn(page)).toBe(2)
    await screenshot(page, "console-usage")

    await groupBy.selectOption("Model")
    await table.getByRole("rowheader", { name: /fake-model-2$/ }).waitFor()
    expect(await bodyRows.count()).toBe(2)
    await expect.poll(() => barsDrawn(page)).toBe(2)

    await groupBy.selectOption("Key")
    await table.getByRole("rowheader", { name: "API key: Reporter" }).waitFor()
    expect(await bodyRows.count()).toBe(2)
    await expect.poll(() => barsDrawn(page)).toBe(2)
    // Dark: the chart is redrawn in the theme's colours, its bars still there.
    await page.emulateMedia({ colorScheme: "dark" })
    await expect.poll(() => barsDrawn(page)).toBe(2)
    await page.emulateMedia({ colorScheme: "light" })

    // At a phone's width the charts and the table fit (the table scrolls inside its own box).
    await page.setViewportSize({ width: 390, height: 800 })
    await expect.poll(() => barsDrawn(page)).toBe(2)
    await expectFitsPhone(page, page.getByRole("img", { name: /^Tokens by/ }))
    await page.setViewportSize({ width: 1280, height: 860 })

    // A range that ends before the usage: no rows, no chart.
    await page.getByLabel("From", { exact: true }).fill("2020-01-01")
    await page.getByLabel("To", { exact: true }).fill("2020-01-31")
    await page.getByRole("status").filter({ hasText: "No usage in this range." }).waitFor()
    expect(await table.count()).toBe(0)
    expect(await page.getByRole("img", { name: /^Tokens by/ }).isVisible()).toBe(false)
    expect(await barsDrawn(page)).toBe(0)
  })
})
