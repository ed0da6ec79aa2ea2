/**
 * The API keys page in Chromium: a key made from the "Chat Client" preset shows its value once
 * (never again after the dialog closes or the page reloads), works for a call through the API,
 * and once revoked in the page, the same call is refused with 401.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { presets } from "../../../src/auth/Scopes.ts"
import { screenshot } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

describe("console: API keys", () => {
  let app: Console
  beforeAll(async () => {
    app = await startConsole()
  })
  afterAll(async () => {
    await app?.close()
  })

  it("creates a key from the Chat Client preset, shows it once, and revokes it (then 401)", async () => {
    const { page, server } = app
    await openPage(page, "API keys")
    await page.getByRole("button", { name: "New key" }).click()
    const dialog = page.getByRole("dialog", { name: "New API key" })
    await dialog.getByLabel("Name").fill("Phone app")
    await dialog.getByLabel("Preset").selectOption({ label: "Chat Client" })
    // The preset ticks exactly its scopes in the catalogue's picker, each shown with its description.
    const chatClient = presets.find((preset) => preset.id === "chat_client")!
    const picker = dialog.getByRole("group", { name: "Scopes" })
    const ticked = await picker.locator("input[type=checkbox]:checked").evaluateAll((boxes) =>
      boxes.map((box) => box.closest("label")!.querySelector("code")!.textContent)
    )
    expect(ticked.sort()).toEqual([...chatClient.scopes].sort())
    await expect(picker.getByText("Send blocking and streaming chat, cancel runs, submit tool results").isVisible()).resolves.toBe(true)
    await dialog.getByRole("button", { name: "Create key" }).click()

    const created = page.getByRole("dialog", { name: "Key created" })
    const value = (await created.getByLabel("New key value").textContent())!
    expect(value).toMatch(/^ask_/)
    await screenshot(page, "console-key-created")

    // The key works through the API with the preset's scopes (bots:read).
    const asKey = { auth: value }
    expect((await server.request("/api/v1/admin/bots", asKey)).status).toBe(200)

    // Closed: the value is nowhere in the page; the list shows the key without it.
    await created.getByRole("button", { name: "Close" }).click()
    const row = page.getByRole("row").filter({ hasText: "Phone app" })
    await row.waitFor()
    expect(await row.getByRole("listitem").allTextContents()).toEqual(expect.arrayContaining([...chatClient.scopes]))
    expect(await page.content()).not.toContain(value)
    await screenshot(page, "console-keys")
    // Its use shows as the last use.
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    await page.getByRole("row").filter({ hasText: "Phone app" }).getByRole("cell").nth(4).locator("time").waitFor()
    expect(await page.content()).not.toContain(value)

    // Revoked in the page, after a confirmation: the same call is refused.
    await page.getByRole("button", { name: "Revoke Phone app" }).click()
    const confirm = page.getByRole("dialog", { name: "Revoke key" })
    await confirm.getByRole("button", { name: "Revoke" }).click()
    await page.getByRole("row").filter({ hasText: "Phone app" }).getByText("revoked").waitFor()
    expect(await page.getByRole("button", { name: "Revoke Phone app" }).count()).toBe(0)
    expect((await server.request("/api/v1/admin/bots", asKey)).status).toBe(401)
  })

  it("shows the server's reason when it refuses a key", async () => {
    const { page } = app
    await page.getByRole("button", { name: "New key" }).click()
    const dialog = page.getByRole("dialog", { name: "New API key" })
    // An expiry in the past: the server's 422 is shown in words, its field named as the form names it.
    await dialog.getByLabel("Name").fill("Too late")
    await dialog.getByLabel("Expires on").fill("2020-01-01")
    await dialog.getByRole("checkbox").first().check()
    await dialog.getByRole("button", { name: "Create key" }).click()
    await dialog.getByRole("alert").filter({ hasText: "Expires at must be in the future." }).waitFor()
    await dialog.getByRole("button", { name: "Cancel" }).click()
  })
})
