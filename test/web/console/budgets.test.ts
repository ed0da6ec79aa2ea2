/**
 * The budgets on the usage page in Chromium: each limit a `meter` whose figures are its text and
 * are written beside it, coloured by state, readable in dark mode and at a phone's width, with no
 * serious accessibility violation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CreateBudget } from "../../../src/budgets/Model.ts"
import { withDefaults } from "../../support/client.ts"
import { expectNoSeriousViolations } from "../axe.ts"
import { screenshot } from "../support.ts"
import { type Console, expectFitsPhone, openPage, startConsole } from "./support.ts"

const budgetBody = withDefaults(CreateBudget)

describe("console: budgets on the usage page", () => {
  let app: Console
  beforeAll(async () => {
    app = await startConsole()
    const { server, llm } = app
    llm.setDefaultReply({ text: "fine", usage: { prompt_tokens: 100, completion_tokens: 750, total_tokens: 850 } })
    await server.call((client) =>
      client.budgets.create({ payload: budgetBody({ scope: "global", period: "month", limit_tokens: 1000, warn_at: 0.8 }) })
    )
    await server.call((client) =>
      client.budgets.create({ payload: budgetBody({ scope: "bot", target: "default", period: "day", limit_usd: 2 }) })
    )
    const spent = await server.request("/api/v1/llm/completions", {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], max_tokens: 100 })
    })
    expect(spent.status).toBe(200)
  }, 240_000)
  afterAll(async () => {
    await app?.close()
  })

  it("shows each budget's limits as meters with their figures, in both themes and at a phone's width", async () => {
    const { page } = app
    await openPage(page, "Usage")
    const budgets = page.getByRole("region", { name: "Budgets" })
    const tokens = budgets.getByRole("meter", { name: /^Every call .*: tokens$/ })
    await tokens.waitFor()
    expect(await tokens.getAttribute("aria-valuetext")).toBe("850 tokens of 1,000 tokens (85%)")
    expect(await tokens.getAttribute("aria-valuenow")).toBe("850")
    expect(await tokens.getAttribute("aria-valuemax")).toBe("1000")
    expect(await budgets.getByText("850 tokens of 1,000 tokens (85%)").count()).toBe(1)
    expect(await budgets.getByText("Past its warning").count()).toBe(1)
    const cost = budgets.getByRole("meter", { name: /^bot default .*: cost$/ })
    expect(await cost.getAttribute("aria-valuetext")).toBe("$0.00 of $2.00 (0%)")
    await expectNoSeriousViolations(page, "usage page with budgets", "section[aria-label='Budgets']")
    await screenshot(page, "console-budgets")

    // Dark: the bar keeps the warning colour, on the dark panel.
    await page.emulateMedia({ colorScheme: "dark" })
    const fill = tokens.locator(".spent")
    expect(await fill.evaluate((element) => (globalThis as any).getComputedStyle(element).backgroundColor)).toBe("rgb(247, 144, 9)")
    await expectNoSeriousViolations(page, "usage page with budgets, dark", "section[aria-label='Budgets']")
    await page.emulateMedia({ colorScheme: "light" })

    await page.setViewportSize({ width: 390, height: 800 })
    await expectFitsPhone(page, tokens)
    await page.setViewportSize({ width: 1280, height: 860 })
  })
})
