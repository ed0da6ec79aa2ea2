/**
 * The Logs page's Live mode in Chromium (issue 58 item 5): a line the server writes shows up as it
 * is written, named and coloured by level; the level and text filters hold; Pause holds new lines
 * until Resume; scrolling up stops the view following until "Jump to latest"; readable in light
 * and dark, at desktop and phone width, with no serious accessibility violation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectNoSeriousViolations } from "../axe.ts"
import { screenshot } from "../support.ts"
import { type Console, expectCleanEverywhere, openPage, startConsole } from "./support.ts"

describe("console: live log", () => {
  let app: Console
  beforeAll(async () => {
    app = await startConsole({ env: { LOG_LEVEL: "debug" } })
  }, 240_000)
  afterAll(async () => {
    await app?.close()
  })

  const setLevel = async (level: string) =>
    expect((await app.server.request("/api/v1/admin/log-level", { method: "PUT", body: JSON.stringify({ level }) })).status).toBe(200)
  const lineOf = (level: string) => `Log level set to ${level} at runtime`

  it("shows lines as they are written, filtered by level and text, paused and resumed", async () => {
    const { page } = app
    await openPage(page, "Logs")
    const live = page.getByRole("region", { name: "Live log" })
    await live.getByRole("button", { name: "Live" }).click()
    await live.getByRole("status").filter({ hasText: "Live" }).waitFor()
    const lines = live.getByRole("log", { name: "Live log lines" })

    await setLevel("debug")
    const written = lines.locator(".tail-line.level-info").filter({ hasText: lineOf("debug") })
    await written.waitFor()
    expect(await written.locator(".tail-level").textContent()).toBe("INFO")
    // Every line: the requests' own debug lines are there too.
    await lines.locator(".tail-line.level-debug").first().waitFor()

    // Many lines, then the reader scrolls up: the view stays where they are.
    for (let i = 0; i < 40; i++) await app.server.request("/api/v1/admin/log-level")
    await lines.locator(".tail-line.level-debug").nth(39).waitFor()
    await lines.hover()
    await page.mouse.wheel(0, -400)
    const jump = live.getByRole("button", { name: "Jump to latest ↓" })
    await jump.waitFor()
    await screenshot(page, "console-logs-live")
    await expectCleanEverywhere(page, "live log")
    await page.emulateMedia({ colorScheme: "dark" })
    await page.setViewportSize({ width: 390, height: 800 })
    await expectNoSeriousViolations(page, "live log, dark phone", "main")
    await page.emulateMedia({ colorScheme: "light" })
    await page.setViewportSize({ width: 1280, height: 860 })
    await jump.click()
    await jump.waitFor({ state: "detached" })

    // Info and up: the debug lines go, an info line written now comes.
    await live.getByLabel("Level").selectOption("info")
    await setLevel("info")
    await lines.locator(".tail-line").filter({ hasText: lineOf("info") }).waitFor()
    expect(await lines.locator(".tail-line.level-debug").count()).toBe(0)

    // Text: only the lines that contain it (the debug line, written first, would have come first).
    await live.getByLabel("Contains").fill("SET TO TRACE")
    await lines.getByText("No lines yet.").waitFor()
    await setLevel("debug")
    await setLevel("trace")
    await lines.locator(".tail-line").filter({ hasText: lineOf("trace") }).waitFor()
    expect(await lines.locator(".tail-line").filter({ hasText: lineOf("debug") }).count()).toBe(0)

    // Paused: a new line is held and counted, and shown on Resume.
    await live.getByLabel("Level").selectOption("")
    await live.getByLabel("Contains").fill("pausedprobe")
    await lines.getByText("No lines yet.").waitFor()
    await live.getByRole("button", { name: "Pause" }).click()
    await app.server.request("/api/v1/pausedprobe")
    const resume = live.getByRole("button", { name: "Resume (1 new)" })
    await resume.waitFor()
    expect(await lines.locator(".tail-line").count()).toBe(0)
    await resume.click()
    await lines.locator(".tail-line.level-debug").filter({ hasText: "/api/v1/pausedprobe" }).waitFor()

    await live.getByRole("button", { name: "Stop live" }).click()
    await lines.waitFor({ state: "detached" })
  })
})
