/**
 * The providers page in Chromium. Adding starts from a preset: Ollama picked with the keyboard alone
 * fills the id, type and base URL and needs no key; saved, it is listed with its type and its
 * models say why the server could not be reached. A custom provider pointing at a fake LLM that
 * requires its key shows the key masked (in the page and in every network response), its
 * connection test succeeds, its models are listed with their prices, a listed model is added to its
 * configured models in one click, and an edit saved without retyping the key keeps the stored key
 * working. The dialog at a phone's width and in dark mode, and every control named.
 */
import type { Locator, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../../fixtures/fakeLlm.ts"
import { screenshot } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

const secret = "sk-provider-secret-4242424242"

/** Every control in `scope` has an accessible name (an unnamed one shows in the ARIA snapshot without a quoted name). */
const expectNamedControls = async (scope: Locator) => {
  const snapshot = await scope.ariaSnapshot()
  expect(snapshot).toMatch(/- (radio|textbox|button) "/)
  expect(snapshot.split("\n").filter((line) => /^\s*- (radio|textbox|button|combobox|checkbox)\b(?! ")/.test(line))).toEqual([])
}

const focusedLabel = (page: Page) =>
  page.evaluate(() => {
    const active = (globalThis as any).document.activeElement
    const labelledBy = active?.getAttribute("aria-labelledby")
    const text: string = labelledBy ? (globalThis as any).document.getElementById(labelledBy)?.textContent : active?.textContent
    // A required field's label ends in its mark.
    return text?.replace(/\*$/, "")
  })

describe("console: providers and models", () => {
  let app: Console
  let upstream: FakeLlm
  /** The bodies of the providers API's answers the page received. */
  const answers: Array<string> = []
  beforeAll(async () => {
    upstream = await startFakeLlm({ apiKey: secret, models: ["alpha-1", "alpha-2"] })
    app = await startConsole()
    app.page.on("response", (response) => {
      if (response.url().includes("/api/v1/admin/providers")) void response.text().then((body) => answers.push(body), () => undefined)
    })
  })
  afterAll(async () => {
    await app?.close()
    await upstream?.close()
  })

  const lastModelsAuthorization = () => upstream.requestsTo("/v1/models").at(-1)?.headers["authorization"]

  it("adds Ollama from its preset with the keyboard alone: fields filled, no key needed, listed with its type", async () => {
    const { page, server } = app
    await openPage(page, "Providers and models")
    await page.getByRole("button", { name: "Add provider" }).focus()
    await page.keyboard.press("Enter")
    const dialog = page.getByRole("dialog", { name: "Add provider" })
    const picker = dialog.getByRole("group", { name: "Which provider?" })
    await picker.waitFor()
    // Each preset with its hint; Custom last.
    const choices = await picker.getByRole("radio").evaluateAll((radios) => radios.map((radio) => radio.getAttribute("value")))
    expect(choices).toEqual([
      "openai",
      "anthropic",
      "gemini",
      "openrouter",
      "ollama",
      "vllm",
      "lmstudio",
      "llamacpp",
      "groq",
      "mistral",
      "deepseek",
      "together",
      "custom"
    ])
    await picker.getByText("Local models: ollama serve, then ollama pull <model>").waitFor()
    expect(await picker.getByRole("radio", { name: "Custom (OpenAI-compatible)" }).isVisible()).toBe(true)
    await expectNamedControls(dialog)
    await screenshot(page, "console-provider-presets")

    // The dialog takes the focus; arrows move through the presets, Enter goes on.
    expect(await focusedLabel(page)).toBe("OpenAI")
    for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowDown")
    expect(await picker.getByRole("radio", { name: "Ollama" }).isChecked()).toBe(true)
    await page.keyboard.press("Enter")
    await dialog.getByLabel("Provider id").waitFor()
    expect(await focusedLabel(page)).toBe("Provider id")
    expect(await dialog.getByLabel("Provider id").inputValue()).toBe("ollama")
    expect(await dialog.getByLabel("Base URL").inputValue()).toBe("http://localhost:11434/v1")
    expect(await dialog.getByTestId("provider-type").textContent()).toContain("OpenAI-compatible")
    expect(await dialog.getByLabel("Type").count()).toBe(0)
    const key = dialog.getByLabel("API key")
    expect(await key.getAttribute("required")).toBeNull()
    expect(await key.getAttribute("aria-describedby").then((id) => page.locator(`[id="${id}"]`).textContent())).toContain("Optional")
    await expectNamedControls(dialog)

    // Back to the picker: the focus is on the preset chosen. Then on, and the base URL edited.
    await dialog.getByRole("button", { name: "Change provider" }).click()
    await picker.waitFor()
    expect(await focusedLabel(page)).toBe("Ollama")
    await page.keyboard.press("Enter")
    await dialog.getByLabel("Provider id").waitFor()
    await page.keyboard.press("Tab")
    expect(await focusedLabel(page)).toBe("Base URL")
    await page.keyboard.press("Control+A")
    await page.keyboard.type("http://127.0.0.1:9/v1")
    await page.keyboard.press("Enter")
    await dialog.waitFor({ state: "hidden" })

    const card = page.getByRole("region", { name: "ollama" })
    await card.waitFor()
    expect(await card.getByTestId("type-ollama").textContent()).toContain("openai")
    // Just added, its models are open: the server could not be reached, and the page says why.
    await card.getByText("The provider could not be reached").waitFor()
    const saved = await server.call((client) => client.providers.get({ path: { id: "ollama" } }))
    expect(saved).toMatchObject({ type: "openai", base_url: "http://127.0.0.1:9/v1", api_key: null })
  })

  it("asks for the key of a preset that needs one", async () => {
    const { page } = app
    await page.getByRole("button", { name: "Add provider" }).click()
    const dialog = page.getByRole("dialog", { name: "Add provider" })
    await dialog.getByRole("radio", { name: "Anthropic (Claude)" }).check()
    await dialog.getByRole("button", { name: "Continue" }).click()
    const key = dialog.getByLabel("API key")
    expect(await key.getAttribute("required")).not.toBeNull()
    expect(await dialog.getByTestId("provider-type").textContent()).toContain("Anthropic")
    await dialog.getByRole("button", { name: "Add provider" }).click()
    expect(await key.evaluate((input) => (input as any).validity.valueMissing)).toBe(true)
    expect(await dialog.isVisible()).toBe(true)
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
  })

  it("adds a custom provider with a masked key, lists its models and adds one in a click, and keeps the key through an edit", async () => {
    const { page, server } = app
    await page.getByRole("button", { name: "Add provider" }).click()
    const dialog = page.getByRole("dialog", { name: "Add provider" })
    await dialog.getByRole("radio", { name: "Custom (OpenAI-compatible)" }).check()
    await dialog.getByRole("button", { name: "Continue" }).click()
    expect(await dialog.getByLabel("Type").locator("option").allTextContents()).toHaveLength(3)
    expect(await dialog.getByLabel("Type").inputValue()).toBe("openai")
    await dialog.getByLabel("Provider id").fill("local")
    await dialog.getByLabel("Base URL").fill(upstream.url)
    await dialog.getByLabel("API key").fill(secret)
    await dialog.getByRole("button", { name: "Add model" }).click()
    const model = dialog.getByRole("group", { name: "Model 1" })
    await model.getByLabel("Model", { exact: true }).fill("alpha-1")
    await model.getByLabel("Input price").fill("0.5")
    await model.getByLabel("Output price").fill("1.5")
    await dialog.getByRole("button", { name: "Add provider" }).click()

    const card = page.getByRole("region", { name: "local" })
    await card.waitFor()
    expect(await card.getByTestId("type-local").textContent()).toContain("openai")
    const shownKey = (await card.getByTestId("key-local").textContent())!
    expect(shownKey.length).toBeGreaterThan(0)
    expect(shownKey).not.toContain(secret.slice(3, -4))
    expect(await page.content()).not.toContain(secret)

    // The connection test reaches the provider with the stored key; its models come with prices.
    await card.getByRole("button", { name: "Test connection" }).click()
    await card.getByText("Connected: the provider lists 2 models").waitFor()
    expect(lastModelsAuthorization()).toBe(`Bearer ${secret}`)
    const models = card.getByRole("table", { name: "Models of local" })
    const alpha1 = models.getByRole("row").filter({ hasText: "local/alpha-1" })
    expect(await alpha1.getByRole("cell").allTextContents()).toEqual([
      "local/alpha-1",
      "$0.5",
      "$1.5",
      "configured here, the provider",
      "yes"
    ])

    await screenshot(page, "console-providers")

    // A model the provider lists, added to the configured ones in one click (from the keyboard).
    await models.getByRole("button", { name: "Add alpha-2 to the configured models" }).focus()
    await page.keyboard.press("Enter")
    await card.getByText("Added alpha-2 to the configured models.").waitFor()
    await models.getByRole("row").filter({ hasText: "local/alpha-2" }).getByRole("cell", { name: "configured here, the provider" })
      .waitFor()
    const stored = await server.call((client) => client.providers.get({ path: { id: "local" } }))
    expect(stored.models.map((m) => [m.id, m.input_price_per_million])).toEqual([["alpha-1", 0.5], ["alpha-2", null]])

    // An edit without retyping the key: the mask goes back and the stored key stays.
    await card.getByRole("button", { name: "Edit" }).click()
    const edit = page.getByRole("dialog", { name: "Edit provider local" })
    expect(await edit.getByLabel("API key").inputValue()).toBe("")
    expect(await edit.getByLabel("Type").inputValue()).toBe("openai")
    expect(await edit.getByRole("group", { name: "Model 2" }).getByLabel("Model", { exact: true }).inputValue()).toBe("alpha-2")
    await edit.getByRole("group", { name: "Model 1" }).getByLabel("Output price").fill("2")
    await edit.getByRole("button", { name: "Save" }).click()
    await edit.waitFor({ state: "hidden" })
    const before = upstream.requestsTo("/v1/models").length
    await card.getByRole("button", { name: "Test connection" }).click()
    await card.getByRole("table", { name: "Models of local" }).getByRole("row").filter({ hasText: "$2" }).waitFor()
    await card.getByText("Connected: the provider lists 2 models").waitFor()
    expect(upstream.requestsTo("/v1/models").length).toBeGreaterThan(before)
    expect(lastModelsAuthorization()).toBe(`Bearer ${secret}`)
    // And a completion through the provider is let in by the fake, which checks the key.
    const answer = await server.call((client) =>
      client.llm.completions({ payload: { model: "local/alpha-1", messages: [{ role: "user", content: "hi" }] } })
    )
    expect(answer.model).toContain("alpha-1")
    expect(upstream.requestsTo("/v1/chat/completions").at(-1)?.headers["authorization"]).toBe(`Bearer ${secret}`)

    // The key appeared in no answer the page received, nor in the page.
    expect(answers.length).toBeGreaterThan(2)
    for (const body of answers) expect(body).not.toContain(secret)
    expect(await page.content()).not.toContain(secret)
  })

  it("shows a failed connection with the provider's reason", async () => {
    const { page } = app
    const card = page.getByRole("region", { name: "local" })
    await card.getByRole("button", { name: "Edit" }).click()
    const edit = page.getByRole("dialog", { name: "Edit provider local" })
    await edit.getByLabel("API key").fill("sk-wrong-key-000000")
    await edit.getByRole("button", { name: "Save" }).click()
    await edit.waitFor({ state: "hidden" })
    await card.getByRole("button", { name: "Test connection" }).click()
    await card.getByText(/Connection failed: .+/).waitFor()
  })

  it("fits a phone's width in dark mode: the page, the picker and the models", async () => {
    const { page } = app
    await page.emulateMedia({ colorScheme: "dark" })
    await page.setViewportSize({ width: 390, height: 800 })
    try {
      const pageWidth = () => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)
      const background = await page.evaluate(() =>
        (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor as string
      )
      expect(background).toBe("rgb(17, 19, 23)")
      // Its models still open since it was added (the toggle says so).
      const ollama = page.getByRole("region", { name: "ollama" })
      expect(await ollama.getByRole("button", { name: "Hide models" }).getAttribute("aria-expanded")).toBe("true")
      await ollama.getByText("The provider could not be reached").waitFor()
      expect(await pageWidth()).toBeLessThanOrEqual(390)
      await page.getByRole("button", { name: "Add provider" }).click()
      const dialog = page.getByRole("dialog", { name: "Add provider" })
      await dialog.getByRole("group", { name: "Which provider?" }).waitFor()
      const box = (await dialog.boundingBox())!
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(390)
      expect(await dialog.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true)
      await dialog.getByRole("radio", { name: "Together AI" }).check()
      await dialog.getByRole("button", { name: "Continue" }).click()
      expect(await dialog.getByLabel("Base URL").inputValue()).toBe("https://api.together.xyz/v1")
      expect(await dialog.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true)
      await expectNamedControls(dialog)
      await dialog.getByRole("button", { name: "Cancel" }).click()
      await dialog.waitFor({ state: "hidden" })
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 })
      await page.emulateMedia({ colorScheme: "light" })
    }
  })
})
