/**
 * Settings forms from the manifest (issue 58 item 3), through the typed client on both databases:
 * each setting's label, type, choices, group and advanced flag as the bundled manifests declare
 * them; a type without a schema of its own still checks what is saved (422 naming the key); Test
 * connection tries the form's values without storing them: the mailbox logs in to a real Dovecot
 * and lists its folders, a wrong host or password fails with the reason, a secret is not carried to
 * a changed URL, and an integration without a check answers 409.
 */
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ValidationError } from "../../src/contract/Errors.ts"
import { type Dovecot, startDovecot } from "../fixtures/dovecot.ts"
import { clientCalls } from "../support/client.ts"
import { backends, tempDir } from "../support/database.ts"
import { writeIntegration } from "../support/integrations.ts"
import { startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("settings forms from the manifest (%s)", (backend) => {
  let server: TestServer
  let dovecot: Dovecot
  const extraDir = tempDir("cairn-settings-form-")
  const calls = () => clientCalls(server.baseUrl, server.apiKey)
  const settingsOf = (id: string) => calls().call((client) => client.integrations.getSettings({ path: { id } }))

  beforeAll(async () => {
    dovecot = await startDovecot()
    writeIntegration(extraDir, "typed", {
      "setup.ts": `export const SETUP = { env_vars: [
        { key: "TYPED_COUNT", type: "number", label: "Count", group: "Main" },
        { key: "TYPED_MODE", type: "enum", choices: ["fast", "slow"] },
        { key: "TYPED_ON", type: "boolean", advanced: true },
        { key: "TYPED_URL", type: "url" }
      ] }\n`
    })
    server = await startServer({
      backend,
      env: {
        INTEGRATION_DIRS: extraDir,
        MAILBOX_EMAIL: dovecot.user,
        MAILBOX_APP_PASSWORD: dovecot.password,
        MAILBOX_IMAP_HOST: dovecot.host,
        MAILBOX_IMAP_PORT: String(dovecot.port),
        MAILBOX_IMAP_SECURITY: "plain",
        MAILBOX_START_DELAY_MS: "3600000"
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await dovecot?.stop()
    fs.rmSync(extraDir, { recursive: true, force: true })
  })

  it("gives each setting its label, type, choices, group and advanced flag", async () => {
    const view = await settingsOf("mailbox")
    expect(view.can_test).toBe(true)
    const byKey = new Map(view.settings.map((setting) => [setting.key, setting]))
    expect(byKey.get("MAILBOX_EMAIL")).toMatchObject({ label: "Address", type: "string", group: "Account", advanced: false })
    expect(byKey.get("MAILBOX_APP_PASSWORD")).toMatchObject({ type: "secret", secret: true })
    expect(byKey.get("MAILBOX_IMAP_SECURITY")).toMatchObject({ type: "enum", choices: ["tls", "starttls", "plain"], group: "Server" })
    expect(byKey.get("MAILBOX_FOLDERS")).toMatchObject({ type: "list", group: "Polling" })
    expect(byKey.get("MAILBOX_IMAP_PORT")).toMatchObject({ type: "number" })
    expect(byKey.get("MAILBOX_START_DELAY_MS")).toMatchObject({ advanced: true })
    const bridge = await settingsOf("msgbridge")
    expect(bridge.can_test).toBe(true)
    expect(bridge.settings.find((s) => s.key === "MSGBRIDGE_SERVER_URL")).toMatchObject({ type: "url", label: "Chat server URL" })
    expect(bridge.settings.find((s) => s.key === "MSGBRIDGE_LEGACY_CLIENT")).toMatchObject({ type: "boolean", advanced: true })
    expect((await settingsOf("github")).can_test).toBe(true)
    expect((await settingsOf("example")).can_test).toBe(false)
    // A setting without a label is labelled by its key.
    expect((await settingsOf("typed")).settings.find((s) => s.key === "TYPED_MODE")).toMatchObject({ label: "TYPED_MODE", group: null })
  })

  it("checks a value by its type on the server, naming the key (422)", async () => {
    const refused = await calls().failsWith(ValidationError, (client) =>
      client.integrations.putSettings({
        path: { id: "typed" },
        payload: { TYPED_COUNT: "many", TYPED_MODE: "medium", TYPED_ON: "perhaps", TYPED_URL: "ftp://x" }
      }))
    const byKey = Object.fromEntries(refused.detail.map((issue) => [issue.loc.at(-1), issue.msg]))
    expect(Object.keys(byKey).sort()).toEqual(["TYPED_COUNT", "TYPED_MODE", "TYPED_ON", "TYPED_URL"])
    expect(byKey.TYPED_MODE).toMatch(/^TYPED_MODE: Expected one of fast, slow/)
    expect(byKey.TYPED_ON).toMatch(/^TYPED_ON: Expected true or false/)
    const saved = await calls().call((client) =>
      client.integrations.putSettings({ path: { id: "typed" }, payload: { TYPED_COUNT: "12", TYPED_MODE: "Fast", TYPED_ON: "true" } })
    )
    expect(saved.settings.find((s) => s.key === "TYPED_COUNT")?.value).toBe("12")
  })

  it("tests the mailbox's connection: logs in and lists the folders, without storing anything", async () => {
    const ok = await calls().call((client) => client.integrations.testSettings({ path: { id: "mailbox" }, payload: {} }))
    expect(ok.ok, ok.message).toBe(true)
    expect(ok.message).toMatch(new RegExp(`^Logged in to ${dovecot.host} as ${dovecot.user}; \\d+ folders: .*INBOX`))

    const wrongHost = await calls().call((client) =>
      client.integrations.testSettings({ path: { id: "mailbox" }, payload: { MAILBOX_IMAP_HOST: "imap.nowhere.invalid" } })
    )
    expect(wrongHost).toMatchObject({ ok: false })
    expect(wrongHost.message).toMatch(/Cannot reach the IMAP server imap\.nowhere\.invalid/)
    const wrongPassword = await calls().call((client) =>
      client.integrations.testSettings({ path: { id: "mailbox" }, payload: { MAILBOX_APP_PASSWORD: "not-it" } })
    )
    expect(wrongPassword).toMatchObject({ ok: false })
    expect(wrongPassword.message).toMatch(/was refused/)
    expect(wrongPassword.message).not.toContain("not-it")
    // Nothing was stored by the tests.
    const after = await settingsOf("mailbox")
    expect(after.settings.find((s) => s.key === "MAILBOX_IMAP_HOST")?.source).toBe("environment")
    expect(after.settings.find((s) => s.key === "MAILBOX_APP_PASSWORD")?.source).toBe("environment")
  })

  it("refuses to test a kept secret against a changed URL, a wrong value (422), and an integration without a check (409)", async () => {
    await calls().call((client) =>
      client.integrations.putSettings({
        path: { id: "msgbridge" },
        payload: { MSGBRIDGE_SERVER_URL: "http://127.0.0.1:9", MSGBRIDGE_PASSWORD: "bridge-secret" }
      })
    )
    const carried = await calls().failsWith(
      ValidationError,
      (client) =>
        client.integrations.testSettings({ path: { id: "msgbridge" }, payload: { MSGBRIDGE_SERVER_URL: "http://attacker.invalid" } })
    )
    expect(carried.detail[0]?.loc.at(-1)).toBe("MSGBRIDGE_PASSWORD")
    const unreachable = await calls().call((client) => client.integrations.testSettings({ path: { id: "msgbridge" }, payload: {} }))
    expect(unreachable.ok).toBe(false)
    const wrong = await calls().failsWith(
      ValidationError,
      (client) => client.integrations.testSettings({ path: { id: "mailbox" }, payload: { MAILBOX_IMAP_PORT: "99999" } })
    )
    expect(wrong.detail[0]?.msg).toMatch(/^MAILBOX_IMAP_PORT: /)
    const none = await calls().attempt((client) => client.integrations.testSettings({ path: { id: "example" }, payload: {} }))
    expect(none._tag).toBe("Left")
    const raw = await server.request("/api/v1/admin/integrations/example/settings/test", { method: "POST", body: "{}" })
    expect(raw.status).toBe(409)
    expect(((await raw.json()) as { detail: string }).detail).toBe("example declares no connection check")
  })
})
