/**
 * Typed integration settings (src/sdk/Settings.ts): a SETUP declares each setting's type, default
 * and whether it is required once; `readSettings` gives typed values or says what is missing or
 * wrong. Pure logic, checked directly, with the mailbox's and the bridge's real SETUPs.
 */
import { describe, expect, it } from "vitest"
import { readConfig as mailboxConfig } from "../../integrations/mailbox/config.ts"
import { readConfig as bridgeConfig } from "../../integrations/msgbridge/config.ts"
import { defineSetup, readSettings, settingProblem, SettingType } from "../../src/sdk/index.ts"

const setup = defineSetup({
  env_vars: [
    { key: "HOST", required: true, schema: SettingType.text },
    { key: "PORT", default: "993", schema: SettingType.integer({ min: 1, max: 65535 }) },
    { key: "MODE", default: "tls", schema: SettingType.choice("tls", "plain") },
    { key: "FOLDERS", schema: SettingType.list },
    { key: "ON", default: "true", schema: SettingType.boolean },
    { key: "TOKEN", required: true, secret: true, schema: SettingType.integer() },
    { key: "NOTE" }
  ]
})

describe("readSettings", () => {
  it("decodes each value by its schema, falling back to the SETUP default", () => {
    const read = readSettings(setup, { HOST: " mail.example ", MODE: "PLAIN", FOLDERS: "INBOX, ,Work", ON: "False", TOKEN: "7" })
    expect(read).toEqual({
      ok: true,
      values: { HOST: "mail.example", PORT: 993, MODE: "plain", FOLDERS: ["INBOX", "Work"], ON: false, TOKEN: 7 }
    })
    if (read.ok) {
      // The types follow the declaration: a defaulted number is a number, an optional one may be missing.
      const port: number = read.values.PORT
      const folders: ReadonlyArray<string> | undefined = read.values.FOLDERS
      const note: string | undefined = read.values.NOTE
      expect([port, folders, note]).toEqual([993, ["INBOX", "Work"], undefined])
    }
  })

  it("names every required setting that is missing or blank", () => {
    expect(readSettings(setup, { HOST: "  " })).toEqual({ ok: false, error: "HOST and TOKEN are not set" })
    expect(readSettings(setup, { TOKEN: "1" })).toEqual({ ok: false, error: "HOST is not set" })
  })

  it("names the setting a value is wrong for, and never repeats a secret's value", () => {
    expect(readSettings(setup, { HOST: "h", TOKEN: "1", PORT: "99999" })).toEqual({
      ok: false,
      error: "PORT: Expected a whole number from 1 to 65535"
    })
    expect(readSettings(setup, { HOST: "h", TOKEN: "1", MODE: "ssl" })).toEqual({ ok: false, error: "MODE: Expected one of tls, plain" })
    expect(readSettings(setup, { HOST: "h", TOKEN: "1", ON: "yes" })).toEqual({ ok: false, error: "ON: Expected true or false" })
    expect(readSettings(setup, { HOST: "h", TOKEN: "hunter2" })).toEqual({ ok: false, error: "TOKEN: not a valid value" })
    expect(settingProblem(setup.env_vars[5], "hunter2")).toBe("TOKEN: not a valid value")
    expect(settingProblem(setup.env_vars[1], "143")).toBeUndefined()
  })

  it("reads http(s) addresses without their trailing slash", () => {
    const url = { key: "URL", schema: SettingType.url }
    expect(readSettings({ env_vars: [url] }, { URL: "http://10.0.0.2:1234//" })).toEqual({
      ok: true,
      values: { URL: "http://10.0.0.2:1234" }
    })
    expect(settingProblem(url, "ftp://host")).toBe("URL: Expected an http:// or https:// address")
    expect(settingProblem(url, "not a url")).toBe("URL: Expected an http:// or https:// address")
  })
})

describe("the mailbox's settings", () => {
  const required = { MAILBOX_EMAIL: "bot@example.org", MAILBOX_APP_PASSWORD: "app-pass" }

  it("come typed, with the SETUP's defaults and no second copy of them", () => {
    const read = mailboxConfig(required)
    expect(read).toMatchObject({
      ok: true,
      config: {
        user: "bot@example.org",
        host: "imap.gmail.com",
        port: 993,
        security: "tls",
        folders: ["INBOX"],
        pollIntervalMs: 60_000,
        maxPerPoll: 25,
        initialFetch: { mode: "new" },
        quarantineLevel: "high",
        classifier: { model: undefined, timeoutMs: 30_000, retryMs: 2000, retries: 3 },
        startDelayMs: 5000
      }
    })
    expect(mailboxConfig({ ...required, MAILBOX_INITIAL_FETCH: "Recent:5", MAILBOX_IMAP_SECURITY: "STARTTLS" })).toMatchObject({
      config: { initialFetch: { mode: "recent", count: 5 }, security: "starttls" }
    })
  })

  it("say what is missing or wrong", () => {
    expect(mailboxConfig({})).toEqual({ ok: false, error: "MAILBOX_EMAIL and MAILBOX_APP_PASSWORD are not set" })
    expect(mailboxConfig({ ...required, MAILBOX_INITIAL_FETCH: "recent:0" })).toEqual({
      ok: false,
      error: "MAILBOX_INITIAL_FETCH: Expected new, all or recent:N"
    })
    expect(mailboxConfig({ ...required, MAILBOX_PATTERN_QUARANTINE_LEVEL: "none" })).toEqual({
      ok: false,
      error: "MAILBOX_PATTERN_QUARANTINE_LEVEL: Expected one of low, medium, high"
    })
  })
})

describe("the messaging bridge's settings", () => {
  it("come typed, with the SETUP's defaults", () => {
    expect(bridgeConfig({ MSGBRIDGE_SERVER_URL: "http://chat.local:1234/", MSGBRIDGE_WAKE_WORDS: "computer, butler" })).toMatchObject({
      serverUrl: "http://chat.local:1234",
      password: undefined,
      wakeWords: ["computer", "butler"],
      defaultBot: "default",
      sendMethod: "apple-script",
      echoWindowMs: 30_000,
      catchUpMaxAgeMs: 24 * 3_600_000,
      replyLimit: 10,
      maxMessageChars: 2000,
      legacyClient: true
    })
  })

  it("refuse a send method it does not have, instead of sending another way", () => {
    expect(() => bridgeConfig({ MSGBRIDGE_SEND_METHOD: "bogus" })).toThrow(
      "Messaging bridge settings: MSGBRIDGE_SEND_METHOD: Expected one of apple-script, private-api"
    )
  })
})
