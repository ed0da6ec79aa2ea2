/**
 * The Bots page in a real Chromium against a real Cairn (PGlite) and the fake LLM: a bot made on
 * the page (system prompt, a tool picked) answers in the chat with that prompt and tool sent to
 * the model; it is edited (prompt, approval policy, fallback models) and deleted with a confirm
 * dialog; the default bot has no delete control.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { screenshot, signInThroughPage } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

interface ChatBody {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
}

describe("console: bots", () => {
  let cairn: Console
  let page: Page

  beforeAll(async () => {
    cairn = await startConsole()
    page = cairn.page
  })
  afterAll(async () => {
    await cairn?.close()
  })

  const botsTable = () => page.getByRole("table", { name: "Bots" })

  it("lists the default bot without a delete control", async () => {
    await openPage(page, "Bots")
    const row = page.getByTestId("bot-default")
    await row.waitFor()
    expect(await row.getByRole("button", { name: "Delete" }).count()).toBe(0)
    await row.getByRole("link").click()
    await page.getByRole("heading", { level: 1, name: /^Bot: / }).waitFor()
    await page.getByRole("button", { name: "Save bot" }).waitFor()
    expect(await page.getByRole("button", { name: "Delete bot" }).count()).toBe(0)
  })

  it("creates a bot with a system prompt and a tool, and the chat sends both to the model", async () => {
    await openPage(page, "Bots")
    await page.getByRole("button", { name: "New bot" }).click()
    const dialog = page.getByRole("dialog", { name: "New bot" })
    await dialog.getByRole("button", { name: "Create" }).waitFor()
    await dialog.getByRole("textbox", { name: "Id", exact: true }).fill("scout")
    await dialog.getByRole("textbox", { name: "Name", exact: true }).fill("Scout")
    await dialog.getByRole("textbox", { name: "System prompt" }).fill("You are Scout. Answer in one short line.")
    const tools = dialog.getByRole("group", { name: /^Tools/ })
    await tools.getByLabel("Filter tools").fill("current_time")
    await tools.getByRole("checkbox", { name: "current_time" }).check()
    await dialog.getByRole("button", { name: "Create" }).click()
    await page.getByRole("heading", { level: 1, name: "Bot: Scout" }).waitFor()
    expect(page.url()).toMatch(/\/admin\/bots\/scout$/)
    const stored = await cairn.server.call((client) => client.bots.get({ path: { id: "scout" } }))
    expect(stored.system_prompt).toBe("You are Scout. Answer in one short line.")
    expect(stored.tools).toEqual(["current_time"])

    // A channel for the bot, made on the Channels page, then a conversation in the chat.
    await openPage(page, "Channels")
    await page.getByRole("button", { name: "New channel" }).click()
    const newChannel = page.getByRole("dialog", { name: "New channel" })
    await newChannel.getByRole("textbox", { name: "Name", exact: true }).fill("Scouting")
    await newChannel.getByRole("combobox", { name: "Bot", exact: true }).selectOption("scout")
    await newChannel.getByRole("button", { name: "Create" }).click()
    await page.getByRole("heading", { level: 1, name: "Channel: Scouting" }).waitFor()

    await page.getByRole("navigation", { name: "Cairn" }).getByRole("link", { name: "Chat", exact: true }).click()
    await page.getByTestId("channels").getByRole("button", { name: /^Scouting ·/ }).click()
    await page.getByRole("button", { name: "New conversation" }).click()
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/)
    cairn.llm.reset()
    cairn.llm.script({ text: "Scout here, all quiet." })
    await page.getByLabel("Message").fill("Report")
    await page.getByLabel("Message").press("Enter")
    await page.getByTestId("stored-answer").filter({ hasText: "Scout here, all quiet." }).waitFor()
    const body = cairn.llm.requestsTo("/v1/chat/completions").at(-1)!.body as ChatBody
    const system = body.messages.find((message) => message.role === "system")
    expect(String(system?.content)).toContain("You are Scout. Answer in one short line.")
    expect(body.tools?.map((tool) => tool.function.name)).toContain("current_time")
  })

  it("edits the bot: prompt, approval policy, fallback models, a skill picked from the server's", async () => {
    await openPage(page, "Bots")
    await botsTable().getByRole("link", { name: "Scout" }).click()
    await page.getByRole("heading", { level: 1, name: "Bot: Scout" }).waitFor()
    await page.getByRole("textbox", { name: "System prompt" }).fill("You are Scout, the careful one.")
    await page.getByLabel("Policy for current_time").selectOption("require_approval")
    await page.getByRole("textbox", { name: "Fallback models" }).fill("fake-model, fake-small")
    await page.getByRole("group", { name: /^Client tools/ }).getByRole("checkbox", { name: "shell_exec" }).check()
    await page.getByLabel("Policy for shell_exec").selectOption("deny")
    await page.getByRole("group", { name: /^Skills/ }).getByRole("checkbox", { name: "integrations/example/example-usage" }).check()
    await page.getByLabel("When outside content is in the conversation").selectOption("deny")
    await page.getByRole("spinbutton", { name: "Approval timeout (seconds)" }).fill("90")
    await page.getByRole("button", { name: "Save bot" }).click()
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    const stored = await cairn.server.call((client) => client.bots.get({ path: { id: "scout" } }))
    expect(stored.untrusted_policy).toBe("deny")
    expect(stored.approval_timeout_seconds).toBe(90)
    expect(stored.system_prompt).toBe("You are Scout, the careful one.")
    expect(stored.tool_policies).toEqual({ current_time: "require_approval", shell_exec: "deny" })
    expect(stored.fallback_models).toEqual(["fake-model", "fake-small"])
    expect(stored.client_tools.map((tool) => tool.name)).toEqual(["shell_exec"])
    expect(stored.tools).toEqual(["current_time"])
    expect(stored.skills).toEqual(["integrations/example/example-usage"])
    await page.getByRole("heading", { name: "System prompt" }).scrollIntoViewIfNeeded()
    await screenshot(page, "console-bot-edit")
  })

  it("shows the server's reason when it refuses a change", async () => {
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("")
    await page.getByRole("textbox", { name: "Name", exact: true }).evaluate((input) => input.removeAttribute("required"))
    await page.getByRole("button", { name: "Save bot" }).click()
    const alert = page.getByRole("alert")
    await alert.waitFor()
    expect((await alert.textContent())?.length).toBeGreaterThan(0)
    expect((await cairn.server.call((client) => client.bots.get({ path: { id: "scout" } }))).name).toBe("Scout")
  })

  it("deletes a bot after a confirm dialog", async () => {
    await openPage(page, "Bots")
    await page.getByTestId("bot-scout").waitFor()
    await screenshot(page, "console-bots")
    await page.getByTestId("bot-scout").getByRole("button", { name: "Delete" }).click()
    const confirm = page.getByRole("dialog", { name: "Delete bot" })
    await confirm.getByText("Scout").first().waitFor()
    await confirm.getByRole("button", { name: "Delete" }).click()
    await page.getByTestId("bot-scout").waitFor({ state: "detached" })
    const list = await cairn.server.call((client) => client.bots.list())
    expect(list.bots.map((bot) => bot.id)).toEqual(["default"])
    expect(await page.getByTestId("bot-default").getByRole("button", { name: "Delete" }).count()).toBe(0)
  })

  it("shows a member (bots:read, no bots:write) the bots without the controls to change them", async () => {
    const made = await cairn.server.request("/api/v1/admin/users", {
      method: "POST",
      body: JSON.stringify({ username: "reader", password: "member password 1", role: "member" })
    })
    expect(made.status).toBe(201)
    const member = await (await cairn.browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage()
    await signInThroughPage(member, cairn.server.baseUrl, "reader", "member password 1")
    await openPage(member, "Bots")
    await member.getByTestId("bot-default").waitFor()
    expect(await member.getByRole("button", { name: "New bot" }).count()).toBe(0)
    expect(await member.getByRole("button", { name: "Delete" }).count()).toBe(0)
    await member.getByTestId("bot-default").getByRole("link").click()
    await member.getByRole("textbox", { name: "System prompt" }).waitFor()
    expect(await member.getByRole("textbox", { name: "System prompt" }).isDisabled()).toBe(true)
    expect(await member.getByRole("button", { name: "Save bot" }).count()).toBe(0)
    await member.context().close()
  })
})
