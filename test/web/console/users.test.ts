/**
 * Users in the console, in Chromium: the list, a role change, disable and enable, delete after an
 * inline confirmation, an invitation link made in a dialog and accepted in a fresh browser (the new
 * user signed in), and the user changing their own password with the errors next to the fields;
 * each readable in both themes and at a phone's width with no serious accessibility violation, and
 * the controls reached from the keyboard.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectNoSeriousViolations } from "../axe.ts"
import { screenshot } from "../support.ts"
import { type Console, openPage, startConsole } from "./support.ts"

/** Axe in light and dark at a desktop's width, and at a phone's (no sideways scrolling). */
const checkEverywhere = async (page: Page, what: string, scope: string) => {
  await expectNoSeriousViolations(page, what, scope)
  await page.emulateMedia({ colorScheme: "dark" })
  await expectNoSeriousViolations(page, `${what}, dark`, scope)
  await page.emulateMedia({ colorScheme: "light" })
  await page.setViewportSize({ width: 390, height: 800 })
  expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(390)
  await expectNoSeriousViolations(page, `${what}, phone`, scope)
  await page.setViewportSize({ width: 1280, height: 860 })
}

describe("console: users", () => {
  let app: Console
  let inviteLink = ""
  beforeAll(async () => {
    app = await startConsole()
    await app.server.call((client) => client.users.create({ payload: { username: "mia", password: "mia's password", role: "member" } }))
  }, 240_000)
  afterAll(async () => {
    await app?.close()
  })

  it("lists users, changes a role, disables, enables and deletes one, in both themes and at a phone's width", async () => {
    const { page } = app
    await openPage(page, "Users")
    const table = page.getByRole("table", { name: "Users" })
    await table.locator("strong", { hasText: "mia" }).waitFor()
    await table.getByText("(you)").waitFor()
    await checkEverywhere(page, "users", "main")
    await screenshot(page, "console-users")

    await table.getByLabel("Role of mia").selectOption("admin")
    await page.getByRole("status").filter({ hasText: "mia is now admin." }).waitFor()

    // From the keyboard: the disable button is reached and pressed with Enter.
    await table.getByRole("button", { name: "Disable mia" }).focus()
    await page.keyboard.press("Enter")
    await page.getByRole("status").filter({ hasText: "mia is disabled and signed out." }).waitFor()
    await table.getByText("disabled", { exact: true }).waitFor()
    const refused = await app.server.request("/auth/login", {
      method: "POST",
      auth: null,
      body: JSON.stringify({ username: "mia", password: "mia's password" })
    })
    expect(refused.status).toBe(401)
    await table.getByRole("button", { name: "Enable mia" }).click()
    await page.getByRole("status").filter({ hasText: "mia can sign in again." }).waitFor()

    await table.getByRole("button", { name: "Delete mia" }).click()
    const confirm = page.getByRole("dialog", { name: "Delete user" })
    await confirm.getByText("Delete mia?").waitFor()
    await confirm.getByText("the API keys they made are revoked", { exact: false }).waitFor()
    await checkEverywhere(page, "users, delete dialog", "dialog")
    await confirm.getByRole("button", { name: "Delete", exact: true }).click()
    await table.locator("strong", { hasText: "mia" }).waitFor({ state: "detached" })
  })

  it("makes an invitation link, shown once, from the keyboard", async () => {
    const { page } = app
    await page.getByRole("button", { name: "Invite user" }).focus()
    await page.keyboard.press("Enter")
    const dialog = page.getByRole("dialog", { name: "Invite user" })
    await dialog.getByLabel("Suggested username").fill("nora")
    await dialog.getByLabel("Link expires after").selectOption("168")
    await expectNoSeriousViolations(page, "invite dialog", "dialog")
    await page.keyboard.press("Enter")
    const shown = page.getByRole("dialog", { name: "Invitation link" })
    inviteLink = (await shown.getByLabel("Invitation link").textContent()) ?? ""
    expect(inviteLink).toMatch(/\/invite\/inv_/)
    await screenshot(page, "console-users-invite")
    await shown.getByRole("button", { name: "Close" }).click()
    const links = page.getByRole("table", { name: "Invitation and reset links" })
    await links.getByText("nora").waitFor()
    // Listed masked: the token is not on the page any more.
    expect(await page.content()).not.toContain(inviteLink.split("/invite/")[1]!)
  })

  it("accepts the invitation in a fresh browser, then the new user changes their own password", async () => {
    const context = await app.browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    try {
      await page.goto(inviteLink)
      await page.getByRole("heading", { name: "Join Cairn" }).waitFor()
      expect(await page.getByLabel("Username").inputValue()).toBe("nora")
      await checkEverywhere(page, "invitation", "main")

      await page.getByLabel(/^Password\*?$/).fill("short")
      await page.getByLabel("Password again").fill("short")
      await page.getByRole("button", { name: "Create account and sign in" }).click()
      await page.getByText("Password must be at least 8 characters.").waitFor()
      await screenshot(page, "invite-accept")
      await page.getByLabel(/^Password\*?$/).fill("nora's passphrase")
      await page.getByLabel("Password again").fill("nora's passphrase")
      await page.getByRole("button", { name: "Create account and sign in" }).click()
      await page.getByTestId("signed-in-as").filter({ hasText: "nora" }).waitFor()

      await page.getByTestId("signed-in-as").click()
      await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor()
      const form = page.getByRole("form", { name: "Change password" })
      await form.getByLabel("Current password").fill("not my password")
      await form.getByLabel(/^New password\*?$/).fill("a better passphrase")
      await form.getByLabel("New password again").fill("a better passphrase")
      await form.getByRole("button", { name: "Change password" }).click()
      await form.getByText("Current password is not right.").waitFor()
      await checkEverywhere(page, "account", "main")
      await screenshot(page, "account-password")

      await form.getByLabel("Current password").fill("nora's passphrase")
      await form.getByLabel("Current password").press("Enter")
      await page.getByRole("status").filter({ hasText: "Password changed." }).waitFor()
      // The page goes on with the tokens the change answered.
      await page.reload()
      await page.getByTestId("signed-in-as").filter({ hasText: "nora" }).waitFor()
      const old = await app.server.request("/auth/login", {
        method: "POST",
        auth: null,
        body: JSON.stringify({ username: "nora", password: "nora's passphrase" })
      })
      expect(old.status).toBe(401)
    } finally {
      await context.close()
    }
  })
})
