/**
 * The shared Composer in a real Chromium, inside the widget (its first user) on a host page: images
 * attached by file pick, paste and drop, previewed, one removed, the rest uploaded through the
 * attachments API and reaching the fake LLM as the model's image parts; Enter sends and Shift+Enter
 * breaks the line; voice recorded from a WAV fed as the microphone, transcribed by `/transcribe`, left
 * in the text area to edit, and sent as edited; the layout at a phone's width and in dark mode.
 */
import { writeFileSync } from "node:fs"
import * as path from "node:path"
import type { Browser, Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureWebBuilt, launchBrowser } from "../support/browser.ts"
import { tempDir } from "../support/database.ts"
import { spokenWav } from "../support/speech.ts"
import { scaled } from "../support/time.ts"
import { startWidgetStack, type WidgetStack } from "../support/widgetHost.ts"

const spoken = "What time does the shop open on Sunday"
const screenshotDir = path.resolve(import.meta.dirname, "../../docs/web")

const composerIn = async (page: Page, url: string): Promise<Frame> => {
  await page.goto(url)
  const frame = (await (await page.waitForSelector("iframe[data-cairn-widget]")).contentFrame())!
  await frame.getByLabel("Message").waitFor()
  return frame
}

/** The text parts and image URLs of the last user message the model was sent. */
const lastUserMessage = (body: any): { text: string; images: Array<string> } => {
  const message = [...body.messages].reverse().find((m: any) => m.role === "user")
  const parts: Array<any> = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content
  return {
    text: parts.filter((p) => p.type === "text").map((p) => p.text).join(""),
    images: parts.filter((p) => p.type === "image_url").map((p) => p.image_url.url)
  }
}

/** Hands `file` to the composer the way a browser does for a paste or a drop. */
const transfer = (frame: Frame, kind: "paste" | "drop", file: { name: string; base64: string }) =>
  frame.evaluate(
    ({ kind, file }) => {
      // Runs in the page (the tests' own types have no DOM).
      const { document, DataTransfer, ClipboardEvent, DragEvent } = globalThis as any
      const bytes = Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0))
      const data = new DataTransfer()
      data.items.add(new File([bytes], file.name, { type: "image/png" }))
      const target = kind === "paste" ? document.querySelector("textarea")! : document.querySelector("[data-testid=\"composer\"]")!
      const event = kind === "paste"
        ? new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true })
        : new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true })
      target.dispatchEvent(event)
    },
    { kind, file }
  )

describe("composer", () => {
  let stack: WidgetStack
  let browser: Browser
  beforeAll(async () => {
    ensureWebBuilt()
    const microphone = path.join(tempDir("cairn-mic-"), "speech.wav")
    writeFileSync(microphone, spokenWav(spoken))
    stack = await startWidgetStack()
    await stack.addBot("studio", ["chat", "attachments:write"])
    browser = await launchBrowser({
      args: ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", `--use-file-for-fake-audio-capture=${microphone}`]
    })
  })
  afterAll(async () => {
    await browser?.close()
    await stack?.close()
  })

  it("attaches images by pick, paste and drop, removes one, and sends the others to the model", async () => {
    const { llm, host } = stack
    llm.reset()
    llm.script({ text: "Two pictures of the shop." })
    const page = await browser.newPage({ viewport: { width: 480, height: 700 } })
    // Three real, different PNGs: screenshots of the host page at three sizes.
    const pngs = [10, 20, 30].map((size) => page.screenshot({ clip: { x: 0, y: 0, width: size, height: size } }))
    const [picked, pasted, dropped] = (await Promise.all(pngs)).map((png) => png.toString("base64"))
    const frame = await composerIn(page, host.pageUrl({ bot: "studio" }))

    await frame.getByTestId("composer-file").setInputFiles({
      name: "picked.png",
      mimeType: "image/png",
      buffer: Buffer.from(picked!, "base64")
    })
    await transfer(frame, "paste", { name: "pasted.png", base64: pasted! })
    await transfer(frame, "drop", { name: "dropped.png", base64: dropped! })
    const previews = frame.getByRole("list", { name: "Attached images" }).getByRole("listitem")
    await expect.poll(() => previews.count()).toBe(3)
    await expect.poll(() => frame.locator("[data-state=\"ready\"]").count(), { timeout: 10_000 }).toBe(3)
    expect(await frame.getByRole("img", { name: "picked.png" }).getAttribute("src")).toMatch(/^blob:/)
    await frame.getByRole("button", { name: "Remove picked.png" }).click()
    await expect.poll(() => previews.count()).toBe(2)

    // Shift+Enter breaks the line; Enter sends.
    const box = frame.getByLabel("Message")
    await box.fill("Here is the shop")
    await box.press("Shift+Enter")
    await box.pressSequentially("from two sides")
    expect(await box.inputValue()).toBe("Here is the shop\nfrom two sides")
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(0)
    await box.press("Enter")
    await frame.locator("li[data-role=\"assistant\"][data-state=\"done\"]").filter({ hasText: "Two pictures of the shop." }).waitFor()
    expect(await box.inputValue()).toBe("")
    expect(await previews.count()).toBe(0)

    const sent = lastUserMessage(llm.requestsTo("/v1/chat/completions").at(-1)!.body)
    expect(sent.text).toContain("Here is the shop\nfrom two sides")
    expect(sent.images).toEqual([`data:image/png;base64,${pasted}`, `data:image/png;base64,${dropped}`])
    await page.close()
  }, scaled(30_000))

  it("records voice from the microphone, puts the transcript in the text area to edit, and sends it as edited", async () => {
    const { llm, host } = stack
    llm.reset()
    llm.scriptTranscriptions({ text: spoken })
    llm.script({ text: "From ten until four." })
    const page = await browser.newPage({ viewport: { width: 480, height: 700 } })
    const frame = await composerIn(page, host.pageUrl({ bot: "studio" }))

    await frame.getByRole("button", { name: "Record voice" }).click()
    await frame.getByRole("button", { name: "Stop recording" }).waitFor()
    await page.waitForTimeout(3_000)
    await frame.getByRole("button", { name: "Stop recording" }).click()
    const box = frame.getByLabel("Message")
    await expect.poll(() => box.inputValue(), { timeout: 15_000 }).toBe(spoken)

    // The engine heard the recording as the documented PCM, wrapped as WAV: seconds of sound.
    const heard = llm.requestsTo("/v1/audio/transcriptions")
    expect(heard).toHaveLength(1)
    expect(heard[0]!.body.file).toMatchObject({ name: "audio.wav", type: "audio/wav" })
    expect((heard[0]!.body.file.size - 44) / 32_000).toBeGreaterThan(2)
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(0)

    await box.press("End")
    await box.pressSequentially(", please?")
    await box.press("Enter")
    await frame.locator("li[data-role=\"assistant\"][data-state=\"done\"]").filter({ hasText: "From ten until four." }).waitFor()
    expect(lastUserMessage(llm.requestsTo("/v1/chat/completions").at(-1)!.body).text).toContain(`${spoken}, please?`)
    await page.close()
  }, scaled(40_000))

  it("fits a phone's width, takes the host's dark theme, and sends from the keyboard alone", async () => {
    const { llm, host } = stack
    llm.reset()
    llm.script({ text: "We open at ten on Sundays and close at four." })
    const page = await browser.newPage({ viewport: { width: 360, height: 640 }, colorScheme: "dark" })
    // Dark as the host's tag says (data-theme), whatever the visitor's system prefers.
    const frame = await composerIn(page, host.pageUrl({ bot: "studio", theme: "dark" }))
    // Keyboard only: from the text, Tab reaches attach, voice and send in that order.
    await frame.getByLabel("Message").fill("When do you open on Sunday?")
    const focused = () => frame.evaluate(() => (globalThis as any).document.activeElement.getAttribute("aria-label") as string)
    for (const label of ["Attach images", "Record voice", "Send"]) {
      await page.keyboard.press("Tab")
      expect(await focused()).toBe(label)
    }
    await page.keyboard.press("Enter")
    await frame.locator("li[data-role=\"assistant\"][data-state=\"done\"]").waitFor()
    const layout = await frame.evaluate(() => {
      const { document, getComputedStyle, window } = globalThis as any
      const root = document.scrollingElement!
      const send = document.querySelector("button[aria-label=\"Send\"]")!.getBoundingClientRect()
      const [r, g, b]: Array<number> = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number)
      return {
        overflow: root.scrollWidth - root.clientWidth,
        sendRight: send.right,
        width: window.innerWidth,
        luminance: (r! + g! + b!) / 3 / 255
      }
    })
    expect(layout.overflow).toBe(0)
    expect(layout.sendRight).toBeLessThanOrEqual(layout.width)
    expect(layout.luminance).toBeLessThan(0.2)
    await (await page.$("iframe[data-cairn-widget]"))!.screenshot({ path: path.join(screenshotDir, "widget-dark-phone.png") })
    await page.close()
  })
})
