/**
 * The console's Operate pages in Chromium against a real Cairn (PGlite) and the fake LLM: a pending
 * task cancelled from the Tasks page (and a refused cancel showing the server's reason), a document
 * uploaded from a file and found by search with its score, system pause toggled in Settings and
 * undone, a workflow step waiting for approval approved, a chat's turn and its trace on the Logs
 * page, and mission control's dashboard with a todo added. Each result is checked through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { until } from "../../support/time.ts"
import { screenshot, signInThroughPage } from "../support.ts"
import { type Console, openPage, startConsole, unfoldGroupOf } from "./support.ts"

const approvalFlow = {
  id: "harbour-notice",
  name: "Harbour notice",
  params: { topic: { type: "string", required: true } },
  steps: [
    { id: "draft", prompt: "Draft a notice on {{topic}}" },
    { id: "publish", prompt: "Publish: {{steps.draft.result}}", approval: true }
  ]
}

describe("console: operations", () => {
  let c: Console

  beforeAll(async () => {
    c = await startConsole({ env: { WORKFLOW_TICK_MS: "100" } })
  })
  afterAll(async () => {
    await c?.close()
  })

  const setting = async (key: string) => (await c.server.call((client) => client.settings.list())).settings.find((s) => s.key === key)!
  const task = (id: string) => c.server.call((client) => client.tasks.get({ path: { id } }))

  it("cancels a pending task from the Tasks page, and shows the server's reason when a cancel is refused", async () => {
    const { page, server } = c
    // Paused, the worker claims nothing: injected runs wait as pending tasks.
    await server.call((client) => client.settings.update({ payload: { SYSTEM_PAUSED: true } }))
    const session = await server.call((client) => client.sessions.create({ payload: { client_id: "console-tasks" } }))
    const inject = (content: string) =>
      server.call((client) =>
        client.injection.inject({
          path: { id: session.session_id },
          payload: { content, source: "console-test", run_agent: true, notify: false }
        })
      )
    const first = (await inject("Check the harbour lights")).task_id!
    const second = (await inject("Count the moorings")).task_id!

    await openPage(page, "Tasks")
    await page.getByLabel("Status").selectOption("pending")
    const row = page.getByRole("table", { name: "Tasks" }).locator(`tr[data-task-id="${first}"]`)
    await row.waitFor()
    await row.getByRole("button", { name: "Inspect" }).click()
    const detail = page.getByRole("dialog", { name: "Task" })
    await expect.poll(() => detail.getByLabel("Prompt").textContent()).toBe("Check the harbour lights")
    await screenshot(page, "console-tasks")
    await detail.getByRole("button", { name: "Close" }).click()

    await row.getByRole("button", { name: `Cancel task ${first}` }).click()
    await page.getByRole("dialog", { name: "Cancel task" }).getByRole("button", { name: "Cancel task" }).click()
    await expect.poll(async () => (await task(first)).status).toBe("cancelled")
    await expect.poll(() => row.count()).toBe(0)

    // Cancelled behind the page's back while its dialog is open: the page's cancel is refused, and says why.
    const stale = page.getByRole("table", { name: "Tasks" }).locator(`tr[data-task-id="${second}"]`)
    await stale.getByRole("button", { name: `Cancel task ${second}` }).click()
    const dialog = page.getByRole("dialog", { name: "Cancel task" })
    await dialog.waitFor()
    expect((await server.request(`/api/v1/tasks/${second}/cancel`, { method: "POST" })).status).toBe(200)
    await dialog.getByRole("button", { name: "Cancel task" }).click()
    const again = (await (await server.request(`/api/v1/tasks/${second}/cancel`, { method: "POST" })).json()) as { detail: string }
    await expect.poll(() => dialog.getByRole("alert").textContent()).toBe(again.detail)
    await dialog.getByRole("button", { name: "Cancel", exact: true }).click()
    await server.call((client) => client.settings.reset({ path: { key: "SYSTEM_PAUSED" } }))
  })

  it("uploads a document from a file and finds it by search, each hit with its score", async () => {
    const { page, server } = c
    await server.call((client) =>
      client.documents.create({
        payload: {
          title: "Lighthouse rota",
          content: "Keepers change at dawn and dusk; the lamp is trimmed at noon.",
          integration_id: "console"
        }
      })
    )
    await openPage(page, "Documents")
    await page.getByRole("button", { name: "Add document" }).click()
    const dialog = page.getByRole("dialog", { name: "Add a document" })
    await dialog.getByLabel("Text file").setInputFiles({
      name: "harbour-tides.md",
      mimeType: "text/markdown",
      buffer: Buffer.from(
        "# Harbour tides\n\nHigh tide at the harbour mouth comes forty minutes after the moon's transit; spring tides flood the quay."
      )
    })
    await expect.poll(() => dialog.getByLabel("Title").inputValue()).toBe("harbour-tides")
    await dialog.getByRole("button", { name: "Add document" }).click()
    const table = page.getByRole("table", { name: "Documents" })
    await table.getByRole("row").filter({ hasText: "harbour-tides" }).waitFor()
    const listed = await server.call((client) => client.documents.list({ urlParams: {} }))
    const uploaded = listed.items.find((d) => d.title === "harbour-tides")!
    expect(uploaded).toMatchObject({ integration_id: "console", chunk_count: expect.any(Number) })

    await page.getByRole("search", { name: "Search documents" }).getByLabel("Query").fill("when is high tide at the harbour")
    await page.getByRole("button", { name: "Search", exact: true }).click()
    const hits = page.getByRole("list", { name: "Search results" }).getByRole("listitem")
    await hits.first().waitFor()
    const expected = await server.call((client) =>
      client.documents.search({ urlParams: { q: "when is high tide at the harbour", integration_id: undefined } })
    )
    expect(await hits.count()).toBe(expected.length)
    expect(await hits.first().getByText(expected[0]!.title, { exact: true }).count()).toBe(1)
    expect(expected[0]!.title).toBe("harbour-tides")
    expect(await page.getByTestId("hit-score").allTextContents()).toEqual(expected.map((hit) => `score ${hit.score.toFixed(4)}`))
    await screenshot(page, "console-documents")
  })

  it("toggles system pause in Settings, seen through the API, then resets it", async () => {
    const { page } = c
    await openPage(page, "Settings")
    const form = page.getByRole("form", { name: "SYSTEM_PAUSED" })
    await form.getByRole("checkbox").check()
    await form.getByRole("button", { name: "Save SYSTEM_PAUSED" }).click()
    await expect.poll(async () => (await setting("SYSTEM_PAUSED")).value).toBe(true)
    expect((await setting("SYSTEM_PAUSED")).source).toBe("stored")
    await expect.poll(() => page.getByTestId("source-SYSTEM_PAUSED").textContent()).toBe("changed here")
    await screenshot(page, "console-settings")
    await form.getByRole("button", { name: "Reset SYSTEM_PAUSED to default" }).click()
    await expect.poll(async () => (await setting("SYSTEM_PAUSED")).source).toBe("environment")
    expect((await setting("SYSTEM_PAUSED")).value).toBe(false)
    await expect.poll(() => form.getByRole("checkbox").isChecked()).toBe(false)

    // A value the server refuses shows its reason, and nothing is stored.
    const rate = page.getByRole("form", { name: "RATE_LIMIT_CHAT" })
    await rate.getByRole("textbox").fill("lots")
    await rate.getByRole("button", { name: "Save RATE_LIMIT_CHAT" }).click()
    await expect.poll(() => rate.getByRole("alert").textContent()).toMatch(/rate|minute/i)
    expect((await setting("RATE_LIMIT_CHAT")).source).toBe("environment")
  })

  it("starts a workflow run and approves the step waiting for approval", async () => {
    const { page, server } = c
    expect((await server.request("/api/v1/admin/workflows", { method: "POST", body: JSON.stringify(approvalFlow) })).status).toBe(201)
    c.llm.script({ text: "Quay closed on Sunday." }, { text: "Notice posted." })
    await openPage(page, "Workflows")
    await page.getByRole("link", { name: "Harbour notice" }).click()
    await page.getByRole("button", { name: "Run", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Run Harbour notice" })
    await dialog.getByLabel("topic").fill("the quay")
    await dialog.getByRole("button", { name: "Start run" }).click()
    const approve = page.getByRole("button", { name: "Approve publish" })
    await approve.waitFor({ timeout: 20_000 })
    const [run] = await server.call((client) => client.workflows.runs({ urlParams: { workflow_id: "harbour-notice" } }))
    expect(run!.steps.map((s) => [s.id, s.status])).toEqual([["draft", "complete"], ["publish", "waiting_approval"]])
    expect(run!.params).toEqual({ topic: "the quay" })
    await screenshot(page, "console-workflows")
    await approve.click()
    const done = await until(
      () => server.call((client) => client.workflows.getRun({ path: { id: run!.id } })),
      (r) => r.status === "complete"
    )
    expect(done.steps.map((s) => s.status)).toEqual(["complete", "complete"])
    await page.getByRole("article", { name: `Run ${run!.id}` }).getByText("complete", { exact: true }).first().waitFor()
  })

  it("shows a chat's turn on the Logs page, and its trace", async () => {
    const { page, server } = c
    c.llm.script({ text: "The tide turns at four." })
    const chat = await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "When does the tide turn?" }) })
    expect(chat.status).toBe(200)
    const turns = await until(() => server.call((client) => client.logs.turns({ urlParams: { limit: 1 } })), (p) => p.items.length > 0)
    const turn = turns.items[0]!
    await openPage(page, "Logs")
    const row = page.getByRole("table", { name: "Turns" }).getByRole("row").filter({
      has: page.getByRole("button", { name: `Trace of turn ${turn.correlation_id}` })
    })
    await row.waitFor()
    expect(await row.textContent()).toContain("fake-model")
    await row.getByRole("button", { name: `Trace of turn ${turn.correlation_id}` }).click()
    const trace = page.getByRole("region", { name: `Trace ${turn.correlation_id}` })
    await trace.getByText("llm", { exact: true }).first().waitFor()
    await screenshot(page, "console-logs")
  })

  it("shows mission control's dashboard and adds a todo", async () => {
    const { page, server } = c
    await openPage(page, "Mission control")
    await page.getByRole("group", { name: "Open todos" }).waitFor()
    await page.getByRole("button", { name: "Add todo" }).click()
    const dialog = page.getByRole("dialog", { name: "Add a todo" })
    await dialog.getByLabel("Title").fill("Renew the harbour permit")
    await dialog.getByRole("button", { name: "Add todo" }).click()
    await page.getByRole("list", { name: "Open todos" }).getByText("Renew the harbour permit").waitFor()
    const dashboard = (await (await server.request("/integrations/mission_control/dashboard")).json()) as {
      todos: Array<{ title: string }>
    }
    expect(dashboard.todos.map((t) => t.title)).toContain("Renew the harbour permit")
    expect(await page.getByRole("group", { name: "Open todos" }).locator("strong").textContent()).toBe(String(dashboard.todos.length))
    await screenshot(page, "console-mission-control")
  })

  it("shows a member only what their scopes allow: documents to search, without adding or deleting", async () => {
    const { server, browser } = c
    expect(
      (await server.request("/api/v1/admin/users", {
        method: "POST",
        body: JSON.stringify({ username: "mia", password: "member password" })
      })).status
    ).toBe(201)
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage()
    await signInThroughPage(page, server.baseUrl, "mia", "member password")
    const nav = page.getByRole("navigation", { name: "Cairn" })
    await unfoldGroupOf(page, "Documents")
    await nav.getByRole("link", { name: "Documents", exact: true }).waitFor()
    // Not folded away: not there at all.
    for (const hidden of ["Tasks", "Logs", "Workflows", "Mission control", "Settings", "Backups"]) {
      expect(await nav.locator("a.nav-link").filter({ hasText: new RegExp(`^${hidden}$`) }).count()).toBe(0)
    }
    await openPage(page, "Documents")
    await page.getByRole("table", { name: "Documents" }).getByRole("row").filter({ hasText: "harbour-tides" }).waitFor()
    expect(await page.getByRole("button", { name: "Add document" }).count()).toBe(0)
    expect(await page.getByRole("button", { name: /^Delete / }).count()).toBe(0)
    await page.getByRole("search", { name: "Search documents" }).getByLabel("Query").fill("lighthouse keepers")
    await page.getByRole("button", { name: "Search", exact: true }).click()
    await page.getByRole("list", { name: "Search results" }).getByText("Lighthouse rota").waitFor()
    // Typed by hand, a page the scopes do not include says so rather than failing call by call.
    await page.goto(`${server.baseUrl}/admin/backups`)
    await page.getByRole("alert").filter({ hasText: "scopes do not include this page" }).waitFor()
    await page.context().close()
  })
})
