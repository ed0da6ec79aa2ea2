/**
 * The HUD in a real Chromium against a real Cairn (PGlite) and the fake chat server: a channel bound
 * to the messaging bridge with the HUD preset `default` shows the bridge's connection badge in the
 * chat header; the chat server stopped, the next poll shows it failing (and the bridge's sidebar
 * status dot turns red, from the worker's own last ping); started again, connected; its helper away,
 * failing with the reason; Pause and Resume act from the badge. A channel
 * bound with the preset `none` shows nothing. The page runs on Playwright's clock, so the test moves
 * time on by the HUD's 30 s interval instead of waiting for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HUD_POLL_MS, READINESS_POLL_MS } from "../../../src/web/app/integrations/polling.ts"
import { type FakeChatServer, startFakeChatServer } from "../../fixtures/chatServer.ts"
import { waitFor } from "../../support/integrations.ts"
import { json } from "../../support/server.ts"
import { scaled } from "../../support/time.ts"
import { screenshot } from "../support.ts"
import { type Console, startConsole } from "./support.ts"

const TOKEN = "hud-webhook-token-0123456789"

describe("console: the HUD", () => {
  let c: Console
  let chat: FakeChatServer
  let port: number

  const hudStatus = async () => json(await c.server.request("/integrations/msgbridge/hud/status"))
  const makeChannel = async (name: string) =>
    (await json(await c.server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name, bot_id: "default" }) })))
      .id as string
  const bind = async (channelId: string, chatGuid: string, hudPreset: "default" | "none") => {
    const response = await c.server.request(`/api/v1/channels/${channelId}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "msgbridge", client_id: `msgbridge:${chatGuid}`, hud_preset: hudPreset })
    })
    expect(response.status).toBe(201)
  }

  beforeAll(async () => {
    chat = await startFakeChatServer()
    port = Number(new URL(chat.url).port)
    // The bridge's worker pings every second: its status follows the chat server within the test's waits.
    c = await startConsole({ env: { MSGBRIDGE_HEALTH_INTERVAL_SECONDS: "1" } })
    const saved = await c.server.request("/api/v1/admin/integrations/msgbridge/settings", {
      method: "PUT",
      body: JSON.stringify({ MSGBRIDGE_SERVER_URL: chat.url, MSGBRIDGE_PASSWORD: chat.password, MSGBRIDGE_WEBHOOK_TOKEN: TOKEN })
    })
    expect(saved.status).toBe(200)
    await bind(await makeChannel("Family chat"), "iMessage;-;+15550100", "default")
    await bind(await makeChannel("Quiet chat"), "iMessage;-;+15550101", "none")
    await waitFor(async () => ((await hudStatus()).connection === "connected" ? true : undefined), "the bridge connected")
    // The page's timers run on Playwright's clock from here (time still flows; the test can jump it).
    await c.page.clock.install()
    await c.page.reload()
    await c.page.getByTestId("signed-in-as").waitFor()
  }, scaled(120_000))
  afterAll(async () => {
    await c?.close()
    await chat?.close()
  })

  const select = async (name: string) => {
    await c.page.getByTestId("channels").getByRole("button", { name: new RegExp(`^${name} ·`) }).click()
    await c.page.getByTestId("chat-channel").filter({ hasText: name }).waitFor()
  }
  const badge = () => c.page.locator(".chat-head").getByTestId("hud-bb-status")
  const badgeIs = (state: string) => c.page.locator(`[data-testid="hud-bb-status"][data-state="${state}"]`).waitFor()
  /** The sidebar's status dot of the bridge reaches `state`, the page's clock moved on by its poll until it does. */
  const bridgeDot = async (state: string) => {
    const dot = c.page.locator(`[data-testid="readiness-Messages"][data-state="${state}"]`)
    const deadline = Date.now() + scaled(30_000)
    while ((await dot.count()) === 0) {
      if (Date.now() > deadline) throw new Error(`The bridge's dot never became ${state}`)
      await c.page.clock.fastForward(READINESS_POLL_MS)
      await c.page.waitForTimeout(300)
    }
  }

  it("shows the bridge's connection badge for a channel bound with the HUD preset default, none for preset none", async () => {
    await select("Family chat")
    await badgeIs("connected")
    expect(await badge().getByText("Connected", { exact: true }).isVisible()).toBe(true)
    expect(await c.page.getByRole("group", { name: "Messages" }).getByRole("button", { name: "Pause" }).isVisible()).toBe(true)
    // Configured, its worker's last ping answered: its sidebar dot is green.
    await bridgeDot("connected")
    await screenshot(c.page, "hud")

    await select("Quiet chat")
    await c.page.waitForTimeout(1_500)
    expect(await c.page.getByTestId("hud").count()).toBe(0)
  })

  it("goes failing when the chat server stops, at the next 30 s poll, and connected when it is back", async () => {
    await select("Family chat")
    await badgeIs("connected")
    await chat.close()
    expect((await hudStatus()).connection).toBe("disconnected")
    // Until the next poll the badge shows what it last read.
    await c.page.waitForTimeout(1_000)
    expect(await badge().getAttribute("data-state")).toBe("connected")
    await c.page.clock.fastForward(HUD_POLL_MS)
    await badgeIs("failing")
    expect(await badge().getByText("Failing", { exact: true }).isVisible()).toBe(true)
    await bridgeDot("failing")

    chat = await startFakeChatServer({ port, password: chat.password })
    expect((await hudStatus()).connection).toBe("connected")
    await c.page.clock.fastForward(HUD_POLL_MS)
    await badgeIs("connected")
    await bridgeDot("connected")

    // The chat server answers but its helper is not connected: failing, with the reason as the tooltip.
    chat.setServerInfo({ helperConnected: false })
    await c.page.clock.fastForward(HUD_POLL_MS)
    await badgeIs("failing")
    expect(await badge().getAttribute("title")).toContain("helper is not connected")
    chat.setServerInfo({ helperConnected: true })
    await c.page.clock.fastForward(HUD_POLL_MS)
    await badgeIs("connected")
  })

  it("pauses and resumes the bridge from the badge", async () => {
    await select("Family chat")
    await badgeIs("connected")
    await badge().getByRole("button", { name: "Pause" }).click()
    await badgeIs("paused")
    expect(await badge().getByText("Paused", { exact: true }).isVisible()).toBe(true)
    expect(await hudStatus()).toMatchObject({ paused: true })
    // Paused, the bridge ignores the chat server's webhooks.
    const ignored = await chat.webhook(
      `${c.server.baseUrl}/integrations/msgbridge/webhook?token=${TOKEN}`,
      "new-message",
      chat.receive({ chatGuid: "iMessage;-;+15550100", text: "anyone there?" })
    )
    expect(ignored.body).toMatchObject({ status: "ignored", reason: "paused" })
    await badge().getByRole("button", { name: "Resume" }).click()
    await badgeIs("connected")
    expect(await hudStatus()).toMatchObject({ paused: false })
  })
})
