/**
 * Issue 56's four defects, each pinned on both databases through HTTP:
 * - a bridge message reported `ignored`/`unbound` is never answered later, when the chat has been
 *   bound and the bridge's catch-up runs again (a settings save restarts its worker);
 * - saving one integration's settings restarts only that integration's background process (and
 *   leaves other integrations' workers running);
 * - a setting's value is checked against the manifest's type (choice, number, boolean): 422 naming
 *   the key, nothing stored;
 * - a bridge webhook without `data.guid` is handled under an id derived from the event, so the same
 *   event delivered twice is answered once.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeChatServer, startFakeChatServer } from "../fixtures/chatServer.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, tempDir, type TestDatabase } from "../support/database.ts"
import { waitFor, writeIntegration } from "../support/integrations.ts"
import { alive, json, startServer, type TestServer } from "../support/server.ts"
import { sleep } from "../support/time.ts"

const TOKEN = "webhook-token-defects-0123"
const REPLY = "Answer from the bot"

describe.each(backends)("issue 56's defects (%s)", (backend) => {
  const dir = tempDir("cairn-inbound-defects-")
  let chat: FakeChatServer
  let llm: FakeLlm
  let db: TestDatabase
  let server: TestServer

  /** Two integrations with a background process each; each start appends a line to its own file. */
  const probe = (id: string) => {
    const out = path.join(dir, `${id}.log`)
    fs.mkdirSync(path.join(dir, "integrations"), { recursive: true })
    writeIntegration(path.join(dir, "integrations"), id, {
      "process.ts":
        `export const DESCRIPTION = "Writes its pid"\nexport const CMD = [process.execPath, "child.mjs"]\nexport const REQUIRED_ENV = []\n`,
      "setup.ts": `export const SETUP = { env_vars: [{ key: "${id.toUpperCase()}_OUT", default: ${
        JSON.stringify(out)
      } }, { key: "${id.toUpperCase()}_MODE", default: "first" }] }\n`,
      "child.mjs": `import fs from "node:fs"
fs.appendFileSync(process.env.${id.toUpperCase()}_OUT, JSON.stringify({ pid: process.pid, mode: process.env.${id.toUpperCase()}_MODE }) + "\\n")
setInterval(() => {}, 1000)
`
    })
    return () => (fs.existsSync(out) ? fs.readFileSync(out, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [])
  }
  const alpha = probe("alpha")
  const beta = probe("beta")

  const putSettings = (id: string, values: Record<string, unknown>) =>
    server.request(`/api/v1/admin/integrations/${id}/settings`, { method: "PUT", body: JSON.stringify(values) })
  const hookUrl = () => `${server.baseUrl}/integrations/msgbridge/webhook?token=${TOKEN}`
  const bind = async (chatGuid: string) => {
    const channel = await json(
      await server.request("/api/v1/admin/channels", {
        method: "POST",
        body: JSON.stringify({ name: `chat ${chatGuid}`, bot_id: "default", require_mention: false })
      })
    )
    const bound = await server.request(`/api/v1/channels/${channel.id}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "msgbridge", client_id: `msgbridge:${chatGuid}` })
    })
    expect(bound.status).toBe(201)
    return channel.id as string
  }
  const sentTo = (chatGuid: string) => chat.sends().filter((s) => s.chatGuid === chatGuid)
  const health = async () =>
    ((await json(await server.request("/api/v1/admin/integrations/msgbridge/workers"))).workers as Array<any>).find((w) =>
      w.name === "health"
    )

  beforeAll(async () => {
    chat = await startFakeChatServer()
    llm = await startFakeLlm({ defaultReply: { text: REPLY } })
    db = await createTestDatabase(backend)
    server = await startServer({
      backend,
      db,
      env: {
        INTEGRATION_DIRS: path.join(dir, "integrations"),
        PROCESS_RESTART_BASE_MS: "200",
        LLM_MAX_RETRIES: "0",
        TASK_POLL_MS: "50",
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model"
      }
    })
    const saved = await putSettings("msgbridge", {
      MSGBRIDGE_SERVER_URL: chat.url,
      MSGBRIDGE_PASSWORD: chat.password,
      MSGBRIDGE_WEBHOOK_TOKEN: TOKEN,
      MSGBRIDGE_HEALTH_INTERVAL_SECONDS: "1",
      MSGBRIDGE_LEGACY_CLIENT: "false"
    })
    expect(saved.status).toBe(200)
    await waitFor(async () => ((await health())?.detail?.last_catch_up_at ? true : undefined), "the bridge's first catch-up")
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    await chat?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("never answers a message it reported unbound, after the chat is bound and the bridge catches up again", async () => {
    const later = "iMessage;-;+15556001"
    const early = chat.receive({ chatGuid: later, text: "anyone there?" })
    const first = await chat.webhook(hookUrl(), "new-message", early)
    expect(first.body).toMatchObject({ status: "ignored", reason: "unbound", guid: early.guid })
    await bind(later)
    // A settings save restarts the bridge's worker, which catches up from its cursor (less its overlap).
    const before = (await health()).detail.last_catch_up_at
    expect((await putSettings("msgbridge", { MSGBRIDGE_STALE_SECONDS: "301" })).status).toBe(200)
    const after = await waitFor(async () => {
      const worker = await health()
      return worker?.detail?.last_catch_up_at && worker.detail.last_catch_up_at !== before ? worker.detail : undefined
    }, "a catch-up after the save")
    expect(after.fetched).toBeGreaterThanOrEqual(1)
    expect(after.triggered).toBe(0)
    // The same message pushed again is still ignored; a new one in the now bound chat is answered.
    expect((await chat.webhook(hookUrl(), "new-message", early)).body).toMatchObject({ status: "ignored" })
    expect((await chat.webhook(hookUrl(), "new-message", chat.receive({ chatGuid: later, text: "hello?" }))).body).toMatchObject({
      status: "triggered"
    })
    await waitFor(() => (sentTo(later).length >= 1 ? true : undefined), "the new message answered")
    await sleep(500)
    expect(sentTo(later)).toHaveLength(1)
  })

  it("handles a webhook without data.guid under an id derived from the event, once", async () => {
    const chatGuid = "iMessage;-;+15556002"
    await bind(chatGuid)
    const data = {
      text: "no guid here",
      isFromMe: false,
      dateCreated: Date.now(),
      handle: { address: "+15556002" },
      chats: [{ guid: chatGuid }]
    }
    const first = await chat.webhook(hookUrl(), "new-message", data)
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ status: "triggered", guid: expect.stringMatching(/^derived:/) })
    const again = await chat.webhook(hookUrl(), "new-message", data)
    expect(again.body).toMatchObject({ status: "ignored", reason: "duplicate", guid: first.body.guid })
    // Another message (other text) from the same chat is another id.
    const other = await chat.webhook(hookUrl(), "new-message", { ...data, text: "a second one" })
    expect(other.body).toMatchObject({ status: "triggered" })
    expect(other.body.guid).not.toBe(first.body.guid)
    await waitFor(() => (sentTo(chatGuid).length >= 2 ? true : undefined), "both answered")
    await sleep(500)
    expect(sentTo(chatGuid)).toHaveLength(2)
  })

  it("refuses a value of the wrong type with a 422 naming the key, and stores nothing", async () => {
    const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
      ["MSGBRIDGE_SEND_METHOD", "bogus", /Expected one of apple-script, private-api/],
      ["MSGBRIDGE_REPLY_LIMIT", "many", /^MSGBRIDGE_REPLY_LIMIT: /],
      ["MSGBRIDGE_REPLY_LIMIT", 2.5, /whole number/],
      ["MSGBRIDGE_LEGACY_CLIENT", "yes", /true or false/],
      ["MSGBRIDGE_ECHO_WINDOW_SECONDS", -3, /above 0/]
    ]
    for (const [key, value, message] of cases) {
      const response = await putSettings("msgbridge", { [key]: value })
      expect(response.status, `${key}=${String(value)}`).toBe(422)
      const body = await json(response)
      expect(body.detail).toEqual([expect.objectContaining({ loc: ["body", key], msg: expect.stringMatching(message) })])
    }
    const settings = (await json(await server.request("/api/v1/admin/integrations/msgbridge/settings"))) as any
    const list: Array<any> = Array.isArray(settings) ? settings : settings.settings
    expect(list.find((s) => s.key === "MSGBRIDGE_SEND_METHOD")).toMatchObject({ value: "apple-script", source: "default" })
    expect(list.find((s) => s.key === "MSGBRIDGE_LEGACY_CLIENT")).toMatchObject({ value: "false", source: "stored" })
    // A good value of each type is taken, in any case the type allows.
    expect((await putSettings("msgbridge", { MSGBRIDGE_SEND_METHOD: "Private-API", MSGBRIDGE_REPLY_LIMIT: 12 })).status).toBe(200)
    expect((await putSettings("msgbridge", { MSGBRIDGE_SEND_METHOD: null })).status).toBe(200)
  })

  it("restarts only the process of the integration whose settings were saved", async () => {
    const [a, b] = await waitFor(
      () => (alpha().length >= 1 && beta().length >= 1 ? [alpha()[0], beta()[0]] : undefined),
      "both processes started"
    )
    // The bridge's worker as it runs once the saves of the tests before have all reached it: the
    // same start seen twice, a notice's travel apart (a restart on its way would change it).
    const bridgeWorker = await waitFor(async () => {
      const first = await health()
      await sleep(1500)
      const second = await health()
      return second?.state === "running" && second.started_at === first?.started_at && second.restarts === first?.restarts
        ? second
        : undefined
    }, "the bridge's worker settled")
    expect((await putSettings("alpha", { ALPHA_MODE: "second" })).status).toBe(200)
    await waitFor(() => alpha().find((line) => line.mode === "second"), "alpha restarted with its new setting")
    await waitFor(() => (alive(a.pid) ? undefined : true), "alpha's old process stopped")
    // Another integration's worker kept running through alpha's save.
    expect(await health()).toMatchObject({ state: "running", started_at: bridgeWorker.started_at, restarts: bridgeWorker.restarts })
    // Saving msgbridge's settings (another integration, no process) restarts neither.
    expect((await putSettings("msgbridge", { MSGBRIDGE_STALE_SECONDS: "302" })).status).toBe(200)
    // Let every notice of those saves travel (the bus, then each supervisor's own look).
    await sleep(1500)
    expect(beta()).toHaveLength(1)
    expect(alive(b.pid)).toBe(true)
    expect(alpha()).toHaveLength(2)
    const status = await json(await server.request("/api/v1/admin/integrations/beta/process"))
    expect(status).toMatchObject({ state: "running", pid: b.pid, restarts: 0 })
  })
})
