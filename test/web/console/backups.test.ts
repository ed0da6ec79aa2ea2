/**
 * The Backups page in Chromium against a real Cairn (PGlite): "Back up now" shows the backup's
 * progress bar, which starts at 0, moves while the tables are dumped and fills when the backup is
 * complete; the history lists it, and its download is the archive the server made. The bar's values are
 * recorded in the page as it renders them (a MutationObserver), so a quick backup's steps are not
 * missed between two looks of the test.
 */
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { screenshot } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

type BarValue = number | "indeterminate"

/** Runs in the page: records the backup bar's value each time the page changes it. */
const recordBar = `
  window.barValues = []
  const record = () => {
    const bar = document.querySelector('progress[aria-label="Backup progress"]')
    if (!bar) return
    const value = bar.hasAttribute("value") ? bar.value : "indeterminate"
    if (window.barValues.at(-1) !== value) window.barValues.push(value)
  }
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true })
`

describe("console: backups", () => {
  let c: Console

  beforeAll(async () => {
    c = await startConsole()
  })
  afterAll(async () => {
    await c?.close()
  })

  it("makes a backup with a progress bar that completes, lists it, and downloads its archive", async () => {
    const { page, server } = c
    await openPage(page, "Backups")
    await page.evaluate(recordBar)
    await page.getByRole("button", { name: "Back up now" }).click()
    const progress = page.getByTestId("backup-progress")
    await progress.and(page.locator("[data-status=\"complete\"]")).waitFor({ timeout: 30_000 })
    const values = await page.evaluate(() => (globalThis as any).barValues as Array<BarValue>)
    // It started at 0 (the server counts the tables before it answers), only grew, and ended full.
    expect(values[0]).toBe(0)
    expect(values.at(-1)).toBe(100)
    expect(values.every((v) => typeof v === "number")).toBe(true)
    expect([...values].sort((a, b) => Number(a) - Number(b))).toEqual(values)

    const [backup] = await server.call((client) => client.operations.history({ urlParams: {} }))
    expect(backup).toMatchObject({ status: "complete", trigger: "manual" })
    expect(await progress.getByText(`${backup!.tables_total} tables`).count()).toBe(1)
    const row = page.getByRole("table", { name: "Backup history" }).locator(`tr[data-backup-id="${backup!.id}"]`)
    await row.getByText("complete", { exact: true }).waitFor()
    await screenshot(page, "console-backups")

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      row.getByRole("button", { name: `Download ${backup!.file_name}` }).click()
    ])
    expect(download.suggestedFilename()).toBe(backup!.file_name)
    const bytes = fs.readFileSync((await download.path())!)
    expect(bytes.length).toBe(backup!.size_bytes)
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b])
    const direct = Buffer.from(await (await server.request(`/api/v1/admin/operations/backup/${backup!.id}/download`)).arrayBuffer())
    expect(bytes.equals(direct)).toBe(true)
  })
})
