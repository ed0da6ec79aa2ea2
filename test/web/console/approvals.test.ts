/**
 * The approval inbox in Chromium: a call held for a person in a run nobody watches (a message put
 * in through the API, its run a task) is listed with its tool, arguments and why; a click approves
 * it and the run goes on; readable in both themes and at a phone's width, with no serious
 * accessibility violation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { taskEnded } from "../../support/server.ts"
import { screenshot } from "../support.ts"
import { type Console, expectCleanEverywhere, openPage, startConsole } from "./support.ts"

describe("console: approvals", () => {
  let app: Console
  let taskId: string
  beforeAll(async () => {
    app = await startConsole({ env: { TASK_POLL_MS: "50" } })
    const { server, llm } = app
    const bot = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "careful", name: "Careful", tools: ["current_time"], tool_policies: { current_time: "require_approval" } })
    })
    expect(bot.status).toBe(201)
    const session = (await (await server.request("/api/v1/sessions", {
      method: "POST",
      body: JSON.stringify({ bot_id: "careful", client_id: "inbox" })
    })).json()) as { session_id: string }
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{\"timezone\":\"UTC\"}" }] }, { text: "It is noon." })
    const injected = (await (await server.request(`/api/v1/sessions/${session.session_id}/messages`, {
      method: "POST",
      body: JSON.stringify({ content: "What time is it?", run_agent: true })
    })).json()) as { task_id: string }
    taskId = injected.task_id
  }, 240_000)
  afterAll(async () => {
    await app?.close()
  })

  it("lists a held call with its arguments and why, and approves it with a click, in both themes and at a phone's width", async () => {
    const { page, server } = app
    await openPage(page, "Approvals")
    const held = page.getByRole("list", { name: "Approvals" }).getByRole("listitem").filter({ hasText: "current_time" })
    await held.waitFor()
    expect(await held.textContent()).toContain("The bot's policy for this tool")
    expect(await held.textContent()).toContain("UTC")
    await screenshot(page, "console-approvals")
    await expectCleanEverywhere(page, "approvals")

    await held.getByRole("button", { name: "Approve current_time" }).focus()
    await page.keyboard.press("Enter")
    await page.getByRole("status").filter({ hasText: "Approved current_time." }).waitFor()
    const task = await taskEnded(server, taskId, 60_000)
    expect(task).toMatchObject({ status: "complete", result: "It is noon." })
    await page.getByRole("button", { name: "Approved" }).click()
    await page.getByRole("list", { name: "Approvals" }).getByText("current_time").first().waitFor()
  })
})
