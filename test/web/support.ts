/** Shared steps of the web app's browser tests: sign in through the pages, take the docs' screenshots. */
import * as path from "node:path"
import type { Page } from "playwright-core"

export const screenshotDir = path.resolve(import.meta.dirname, "../../docs/web")

/** A screenshot for docs/web.md, taken by the test run (never by hand). */
export const screenshot = (page: Page, name: string) => page.screenshot({ path: path.join(screenshotDir, `${name}.png`) })

export const signInThroughPage = async (page: Page, baseUrl: string, username: string, password: string) => {
  await page.goto(`${baseUrl}/`)
  await page.getByLabel("Username").fill(username)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in", exact: true }).click()
  await page.getByTestId("signed-in-as").filter({ hasText: username }).waitFor()
}

/** The first admin, made through the setup page (with the server's API_KEY, as it requires). */
export const setUpThroughPage = async (page: Page, baseUrl: string, apiKey: string, username: string, password: string, shot?: string) => {
  await page.goto(`${baseUrl}/`)
  await page.getByRole("heading", { name: "Create the first admin" }).waitFor()
  await page.getByLabel("Server API key").fill(apiKey)
  await page.getByLabel("Username").fill(username)
  await page.getByLabel("Password").fill(password)
  if (shot) await screenshot(page, shot)
  await page.getByRole("button", { name: "Create admin and sign in" }).click()
  await page.getByTestId("signed-in-as").filter({ hasText: username }).waitFor()
}
