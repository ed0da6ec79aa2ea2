/**
 * Honest status (issue 58 item 2), through the typed client on both databases: the mailbox pointed
 * at an IMAP host that does not exist shows `failing: <reason>, since <when>` within one poll
 * interval (its last real login, not its settings), `cairn status` says the same words and exits 1;
 * unconfigured integrations are `not configured`; an integration without workers is `connected`; a
 * settings change starts it over at `connecting`. The bundled example runs only with
 * EXAMPLE_INTEGRATION=true.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clientCalls } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { runCli, startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

const pollSeconds = 2

describe.each(backends)("integration status (%s)", (backend) => {
  let server: TestServer
  const calls = () => clientCalls(server.baseUrl, server.apiKey)
  const integration = async (id: string) =>
    (await calls().call((client) => client.integrations.list())).integrations.find((entry) => entry.id === id)!

  beforeAll(async () => {
    server = await startServer({
      backend,
      env: {
        MAILBOX_EMAIL: "someone@example.test",
        MAILBOX_APP_PASSWORD: "app-password",
        MAILBOX_IMAP_HOST: "imap.nowhere.invalid",
        MAILBOX_START_DELAY_MS: "0",
        MAILBOX_POLL_INTERVAL: String(pollSeconds),
        WORKER_RESTART_BASE_MS: "500",
        WORKER_RESTART_MAX_MS: "2000"
      }
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("shows the mailbox failing within one poll interval, with the reason and since when", async () => {
    await expect.poll(async () => (await integration("mailbox")).health.state, { timeout: scaled(pollSeconds * 1000 + 15_000) })
      .toBe("failing")
    const mailbox = await integration("mailbox")
    // Configured all the same: the configuration is one thing, whether it works another.
    expect(mailbox.status).toBe("ready")
    expect(mailbox.health.reason).toMatch(/imap\.nowhere\.invalid|ENOTFOUND|EAI_AGAIN/i)
    expect(mailbox.health.since).not.toBeNull()
    expect(mailbox.health.words).toBe(
      `failing: ${mailbox.health.reason}, since ${mailbox.health.since!.slice(0, 10)} ${mailbox.health.since!.slice(11, 19)} UTC`
    )
    const poller = mailbox.workers.find((worker) => worker.name === "poller")!
    expect(poller.connects).toBe(true)
    expect(poller.failing_since).toBe(mailbox.health.since)
    // Still failing after a retry, and still since the first failure.
    await expect.poll(async () => (await integration("mailbox")).workers[0]!.restarts, { timeout: scaled(20_000) }).toBeGreaterThan(1)
    expect((await integration("mailbox")).health).toMatchObject({ state: "failing", since: mailbox.health.since })
  })

  it("says not configured for an integration missing its settings, and connected for one running without contact to report", async () => {
    const bridge = await integration("msgbridge")
    expect(bridge.health).toMatchObject({ state: "not_configured" })
    expect(bridge.health.words).toMatch(/^not configured: missing MSGBRIDGE_SERVER_URL/)
    await expect.poll(async () => (await integration("example")).health.state).toBe("connected")
    expect((await integration("example")).health.words).toBe("connected")
  })

  it("cairn status shows the same words and exits 1 while an integration fails", async () => {
    const result = await runCli(["status", "--url", server.baseUrl, "--key", server.apiKey], { COLUMNS: "200" })
    expect(result.code, result.output).toBe(1)
    expect(result.stdout).toMatch(/^mailbox\s+.*failing: /m)
    expect(result.stdout).toMatch(/^msgbridge\s+.*not configured: missing MSGBRIDGE_SERVER_URL/m)
    expect(result.stderr).toMatch(/failing: mailbox/)
    const json = await runCli(["status", "--json", "--url", server.baseUrl, "--key", server.apiKey])
    const mailbox = JSON.parse(json.stdout).integrations.find((entry: { id: string }) => entry.id === "mailbox")
    expect(mailbox).toMatchObject({ state: "failing", configuration: "ready" })
    expect(mailbox.status).toMatch(/^failing: /)
  })

  it("starts over at connecting (not failing) when its settings change", async () => {
    await calls().call((client) =>
      client.integrations.putSettings({
        path: { id: "mailbox" },
        payload: { MAILBOX_IMAP_HOST: "imap.elsewhere.invalid", MAILBOX_START_DELAY_MS: "60000" }
      })
    )
    await expect.poll(async () => (await integration("mailbox")).health.state, { timeout: scaled(15_000) }).toBe("connecting")
    expect((await integration("mailbox")).health.since).toBeNull()
  })
})

describe("the bundled example integration", () => {
  let server: TestServer
  afterAll(async () => {
    await server?.close()
  })

  it("is off unless EXAMPLE_INTEGRATION=true", async () => {
    server = await startServer({ backend: "pglite", env: { EXAMPLE_INTEGRATION: "false" } })
    const { integrations } = await clientCalls(server.baseUrl, server.apiKey).call((client) => client.integrations.list())
    expect(integrations.map((entry) => entry.id)).not.toContain("example")
    expect(integrations.map((entry) => entry.id)).toContain("mailbox")
  })
})
