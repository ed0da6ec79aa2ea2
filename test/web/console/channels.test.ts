/**
 * The Channels page in a real Chromium against a real Cairn (PGlite): a channel's settings saved
 * and stored, an integration binding added (wake words, bot-name flag, HUD preset) and edited, a
 * workspace file made, edited and read back through the API, a heartbeat saved, and the channel's
 * sessions linked to the chat.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { screenshot, signInThroughPage } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

describe("console: channels", () => {
  let cairn: Console
  let page: Page
  let channelId: string

  beforeAll(async () => {
    cairn = await startConsole()
    page = cairn.page
    // A second provider with a model of its own, for the model override's list.
    const created = await cairn.server.request("/api/v1/admin/providers", {
      method: "POST",
      body: JSON.stringify({ id: "second", base_url: cairn.llm.url, api_key: "sk-second-provider-key", models: [{ id: "fake-large" }] })
    })
    expect(created.status).toBe(201)
  })
  afterAll(async () => {
    await cairn?.close()
  })

  const stored = () => cairn.server.call((client) => client.channels.get({ path: { id: channelId } }))

  it("makes a channel and saves its settings", async () => {
    await openPage(page, "Channels")
    await page.getByRole("button", { name: "New channel" }).click()
    const dialog = page.getByRole("dialog", { name: "New channel" })
    await dialog.getByRole("textbox", { name: "Name", exact: true }).fill("Family")
    await dialog.getByRole("button", { name: "Create" }).click()
    await page.getByRole("heading", { level: 1, name: "Channel: Family" }).waitFor()
    channelId = /\/admin\/channels\/([0-9a-f-]{36})$/.exec(page.url())![1]!

    const settings = page.getByRole("form", { name: "Channel settings" })
    await settings.getByRole("checkbox", { name: "Require a mention" }).check()
    await settings.getByRole("checkbox", { name: "Passive memory" }).check()
    await settings.getByRole("checkbox", { name: "Workspace enabled" }).check()
    await settings.getByRole("combobox", { name: "Model override" }).selectOption("second/fake-large")
    await settings.getByRole("button", { name: "Save settings" }).click()
    await settings.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    expect(await stored()).toMatchObject({
      require_mention: true,
      passive_memory: true,
      workspace_enabled: true,
      model_override: "second/fake-large"
    })

    // Back to the bot's model.
    await settings.getByRole("checkbox", { name: "Passive memory" }).uncheck()
    await settings.getByRole("combobox", { name: "Model override" }).selectOption("")
    await settings.getByRole("button", { name: "Save settings" }).click()
    await settings.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    expect(await stored()).toMatchObject({ require_mention: true, passive_memory: false, workspace_enabled: true, model_override: null })
  })

  it("adds a binding with wake words and a HUD preset, then edits and removes one", async () => {
    const bindings = page.getByRole("region", { name: "Integration bindings" })
    await bindings.getByRole("button", { name: "Add binding" }).click()
    const dialog = page.getByRole("dialog", { name: "Add binding" })
    await dialog.getByRole("combobox", { name: "Integration type" }).selectOption("msgbridge")
    // The integration's client id prefix is filled in.
    expect(await dialog.getByRole("textbox", { name: "Client id" }).inputValue()).toBe("msgbridge:")
    await dialog.getByRole("textbox", { name: "Client id" }).fill("msgbridge:iMessage;-;family")
    await dialog.getByRole("textbox", { name: "Wake words" }).fill("hey cairn, computer")
    await dialog.getByRole("checkbox", { name: "The bot's name is a wake word" }).uncheck()
    await dialog.getByRole("combobox", { name: "HUD preset" }).selectOption("none")
    await dialog.getByRole("button", { name: "Add" }).click()
    await bindings.getByTestId("binding").filter({ hasText: "msgbridge:iMessage;-;family" }).waitFor()
    const listed = async () => (await cairn.server.call((client) => client.bindings.list({ path: { id: channelId } }))).bindings
    expect(await listed()).toMatchObject([
      {
        integration_type: "msgbridge",
        client_id: "msgbridge:iMessage;-;family",
        wake_words: ["hey cairn", "computer"],
        use_bot_wake_word: false,
        hud_preset: "none"
      }
    ])

    await bindings.getByRole("button", { name: "Edit binding msgbridge:iMessage;-;family" }).click()
    const edit = page.getByRole("dialog", { name: "Edit binding" })
    await edit.getByRole("combobox", { name: "HUD preset" }).selectOption("default")
    await edit.getByRole("textbox", { name: "Wake words" }).fill("hey cairn")
    await edit.getByRole("button", { name: "Save" }).click()
    await edit.waitFor({ state: "hidden" })
    expect(await listed()).toMatchObject([{ wake_words: ["hey cairn"], use_bot_wake_word: false, hud_preset: "default" }])

    // A refused binding shows the server's reason; a second binding is removed after a confirm.
    await bindings.getByRole("button", { name: "Add binding" }).click()
    const bad = page.getByRole("dialog", { name: "Add binding" })
    await bad.getByRole("combobox", { name: "Integration type" }).selectOption("msgbridge")
    await bad.getByRole("textbox", { name: "Client id" }).fill("msgbridge:iMessage;-;family")
    await bad.getByRole("button", { name: "Add" }).click()
    await bad.getByRole("alert").filter({ hasText: "already bound" }).waitFor()
    await bad.getByRole("textbox", { name: "Client id" }).fill("msgbridge:spare")
    await bad.getByRole("button", { name: "Add" }).click()
    await bindings.getByTestId("binding").filter({ hasText: "msgbridge:spare" }).waitFor()
    await bindings.getByRole("button", { name: "Remove binding msgbridge:spare" }).click()
    await page.getByRole("dialog", { name: "Remove binding" }).getByRole("button", { name: "Remove" }).click()
    await bindings.getByTestId("binding").filter({ hasText: "msgbridge:spare" }).waitFor({ state: "detached" })
    expect((await listed()).map((binding) => binding.client_id)).toEqual(["msgbridge:iMessage;-;family"])
  })

  it("saves a heartbeat", async () => {
    const heartbeat = page.getByRole("form", { name: "Heartbeat settings" })
    await heartbeat.getByRole("textbox", { name: "Heartbeat prompt" }).fill("Anything the family should know today?")
    await heartbeat.getByRole("spinbutton", { name: "Interval (seconds)" }).fill("900")
    await heartbeat.getByRole("textbox", { name: "Time zone" }).fill("Europe/Oslo")
    await heartbeat.getByRole("textbox", { name: "Quiet from" }).fill("22:00")
    await heartbeat.getByRole("textbox", { name: "Quiet until" }).fill("07:00")
    await heartbeat.getByRole("button", { name: "Save heartbeat" }).click()
    await heartbeat.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    const saved = await cairn.server.call((client) => client.heartbeats.get({ path: { id: channelId } }))
    expect(saved).toMatchObject({
      prompt: "Anything the family should know today?",
      interval_seconds: 900,
      cron: null,
      timezone: "Europe/Oslo",
      quiet_start: "22:00",
      quiet_end: "07:00",
      enabled: true
    })
    await page.getByRole("region", { name: "Heartbeat" }).getByText("Next run:").waitFor()
  })

  it("makes, edits and deletes a workspace file; the API reads what the page wrote", async () => {
    const workspace = page.getByRole("region", { name: "Workspace" })
    await workspace.getByRole("button", { name: "New file" }).click()
    const dialog = page.getByRole("dialog", { name: "New file" })
    await dialog.getByRole("textbox", { name: "Path" }).fill("notes/today.md")
    await dialog.getByRole("button", { name: "Create" }).click()
    const editor = workspace.getByRole("form", { name: "File notes/today.md" })
    await editor.getByRole("textbox", { name: "Content of notes/today.md" }).fill("# Today\n\n- buy milk\n")
    await editor.getByRole("button", { name: "Save file" }).click()
    await editor.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    const read = () =>
      cairn.server.call((client) => client.workspaces.readFile({ path: { id: channelId }, urlParams: { path: "notes/today.md" } }))
    expect((await read()).content).toBe("# Today\n\n- buy milk\n")

    // Opened from the list again, edited, saved, read back.
    await workspace.getByRole("navigation", { name: "Workspace files" }).getByRole("button", { name: "notes/today.md" }).click()
    const content = editor.getByRole("textbox", { name: "Content of notes/today.md" })
    expect(await content.inputValue()).toBe("# Today\n\n- buy milk\n")
    await content.fill("# Today\n\n- buy milk\n- call grandma\n")
    await editor.getByRole("button", { name: "Save file" }).click()
    await editor.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    expect((await read()).content).toBe("# Today\n\n- buy milk\n- call grandma\n")

    await cairn.server.call((client) =>
      client.workspaces.writeFile({
        path: { id: channelId },
        urlParams: { path: "scratch.txt" },
        payload: { content: "x", encoding: "utf8" }
      })
    )
    await workspace.getByRole("button", { name: "New file" }).click()
    await page.getByRole("dialog", { name: "New file" }).getByRole("button", { name: "Cancel" }).click()
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Channel: Family" }).waitFor()
    const files = page.getByRole("navigation", { name: "Workspace files" })
    await files.getByRole("button", { name: "scratch.txt" }).click()
    await page.getByRole("form", { name: "File scratch.txt" }).getByRole("button", { name: "Delete file" }).click()
    await page.getByRole("dialog", { name: "Delete file" }).getByRole("button", { name: "Delete" }).click()
    await files.getByRole("button", { name: "scratch.txt" }).waitFor({ state: "detached" })
    const listed = await cairn.server.call((client) => client.workspaces.list({ path: { id: channelId } }))
    expect(listed.files.map((file) => file.path)).toEqual(["notes/today.md"])
    await files.getByRole("button", { name: "notes/today.md" }).click()
    // The whole channel page in one picture for the docs.
    await page.setViewportSize({ width: 1280, height: 1700 })
    await screenshot(page, "console-channel")
    await page.setViewportSize({ width: 1280, height: 860 })
  })

  it("lists the channel's sessions, each opening in the chat", async () => {
    const channel = await stored()
    const { session_id: sessionId } = await cairn.server.call((client) =>
      client.sessions.create({ payload: { bot_id: channel.bot_id, client_id: channel.client_id } })
    )
    await page.reload()
    const sessions = page.getByRole("region", { name: "Sessions" })
    const link = sessions.getByRole("link").first()
    await link.waitFor()
    expect(await link.getAttribute("href")).toBe(`/chat/${sessionId}`)

    await openPage(page, "Channels")
    await page.getByRole("table", { name: "Channels" }).getByRole("link", { name: "Family" }).waitFor()
    await screenshot(page, "console-channels")
    await page.getByRole("table", { name: "Channels" }).getByRole("link", { name: "Family" }).click()
    await page.getByRole("region", { name: "Sessions" }).getByRole("link").first().click()
    await page.waitForURL(new RegExp(`/chat/${sessionId}$`))
  })

  it("fits a phone's width: wide tables scroll by themselves, the page does not", async () => {
    await page.setViewportSize({ width: 390, height: 800 })
    await page.goto(`${cairn.server.baseUrl}/admin/channels/${channelId}`)
    await page.getByRole("heading", { level: 1, name: "Channel: Family" }).waitFor()
    await page.getByRole("region", { name: "Integration bindings" }).getByTestId("binding").first().waitFor()
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(390)
    await page.goto(`${cairn.server.baseUrl}/admin/bots/default`)
    await page.getByRole("button", { name: "Save bot" }).waitFor()
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(390)
    await page.setViewportSize({ width: 1280, height: 860 })
  })

  it("shows a member (channels:read/write, workspaces.files:read alone) the workspace read-only and the rest editable", async () => {
    const made = await cairn.server.request("/api/v1/admin/users", {
      method: "POST",
      body: JSON.stringify({ username: "reader", password: "member password 1", role: "member" })
    })
    expect(made.status).toBe(201)
    const member = await (await cairn.browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage()
    await signInThroughPage(member, cairn.server.baseUrl, "reader", "member password 1")
    await member.goto(`${cairn.server.baseUrl}/admin/channels/${channelId}`)
    await member.getByRole("heading", { level: 1, name: "Channel: Family" }).waitFor()
    await member.getByRole("navigation", { name: "Workspace files" }).getByRole("button", { name: "notes/today.md" }).click()
    await member.getByRole("form", { name: "File notes/today.md" }).waitFor()
    // channels:write implies the channels.*:write scopes: settings, bindings and heartbeat are the member's to change.
    await member.getByRole("button", { name: "Save settings" }).waitFor()
    await member.getByRole("region", { name: "Integration bindings" }).getByRole("button", { name: "Add binding" }).waitFor()
    await member.getByRole("button", { name: "Save heartbeat" }).waitFor()
    // No workspaces.files:write: the file is shown, not editable.
    expect(await member.getByRole("textbox", { name: "Content of notes/today.md" }).getAttribute("readonly")).not.toBeNull()
    expect(await member.getByRole("button", { name: "New file" }).count()).toBe(0)
    expect(await member.getByRole("button", { name: "Save file" }).count()).toBe(0)
    expect(await member.getByRole("button", { name: "Delete file" }).count()).toBe(0)
    await member.context().close()
  })
})
