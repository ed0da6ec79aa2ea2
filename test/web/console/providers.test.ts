/**
 * The providers page in Chromium: a provider added pointing at a fake LLM that requires its key
 * shows the key masked (in the page and in every network response), its connection test
 * succeeds, its models are listed with their prices, and an edit saved without retyping the key
 * keeps the stored key working.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../../fixtures/fakeLlm.ts"
import { screenshot } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

const secret = "sk-provider-secret-4242424242"

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

  it("adds a provider with a masked key, tests it, lists its models and keeps the key through an edit", async () => {
    const { page, server } = app
    await openPage(page, "Providers and models")
    await page.getByRole("button", { name: "Add provider" }).click()
    const dialog = page.getByRole("dialog", { name: "Add provider" })
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
    expect(await alpha1.getByRole("cell").allTextContents()).toEqual(["local/alpha-1", "$0.5", "$1.5", "configured here, the provider"])
    await models.getByRole("row").filter({ hasText: "local/alpha-2" }).waitFor()
    await screenshot(page, "console-providers")

    // An edit without retyping the key: the mask goes back and the stored key stays.
    await card.getByRole("button", { name: "Edit" }).click()
    const edit = page.getByRole("dialog", { name: "Edit provider local" })
    expect(await edit.getByLabel("API key").inputValue()).toBe("")
    await edit.getByRole("group", { name: "Model 1" }).getByLabel("Output price").fill("2")
    await edit.getByRole("button", { name: "Save" }).click()
    await edit.waitFor({ state: "hidden" })
    const before = upstream.requestsTo("/v1/models").length
    await card.getByRole("button", { name: "Test connection" }).click()
    await card.getByRole("table", { name: "Models of local" }).getByRole("row").filter({ hasText: "$2" }).waitFor()
    await card.getByText("Connected: the provider lists 2 models").waitFor()
    expect(upstream.requestsTo("/v1/models").length).toBe(before + 1)
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
})
