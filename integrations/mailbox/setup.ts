import { ParseResult, Schema } from "effect"
import { defineSetup, SettingType } from "../../src/sdk/index.ts"
import { checkConnection } from "./check.ts"

/** new (only mail arriving after the first start), all, or recent:N (the last N of each folder). */
const InitialFetch = Schema.transformOrFail(
  Schema.compose(Schema.Trim, Schema.Lowercase),
  Schema.Union(
    Schema.Struct({ mode: Schema.Literal("new", "all") }),
    Schema.Struct({ mode: Schema.Literal("recent"), count: Schema.Int.pipe(Schema.positive()) })
  ),
  {
    strict: true,
    decode: (text, _, ast) => {
      const recent = /^recent:(\d+)$/.exec(text)
      if (recent && Number(recent[1]) > 0) return ParseResult.succeed({ mode: "recent" as const, count: Number(recent[1]) })
      if (text === "new") return ParseResult.succeed({ mode: "new" as const })
      if (text === "all") return ParseResult.succeed({ mode: "all" as const })
      return ParseResult.fail(new ParseResult.Type(ast, text, "Expected new, all or recent:N"))
    },
    encode: (fetch) => ParseResult.succeed(fetch.mode === "recent" ? `recent:${fetch.count}` : fetch.mode)
  }
)

export const SETUP = defineSetup({
  env_vars: [
    {
      key: "MAILBOX_EMAIL",
      label: "Address",
      group: "Account",
      required: true,
      schema: SettingType.text,
      description:
        "The mailbox address (also its IMAP user name unless MAILBOX_IMAP_USER says otherwise); channels bind it as mailbox:<address>"
    },
    {
      key: "MAILBOX_APP_PASSWORD",
      label: "App password",
      type: "secret",
      group: "Account",
      required: true,
      secret: true,
      description: "An app password for IMAP (the account needs two-step verification); OAuth is not supported"
    },
    {
      key: "MAILBOX_IMAP_USER",
      label: "IMAP user name",
      group: "Server",
      advanced: true,
      schema: SettingType.text,
      description: "The IMAP login when it is not the address"
    },
    {
      key: "MAILBOX_IMAP_HOST",
      label: "IMAP server",
      group: "Server",
      default: "imap.gmail.com",
      schema: SettingType.text,
      description: "IMAP server"
    },
    {
      key: "MAILBOX_IMAP_PORT",
      label: "Port",
      type: "number",
      group: "Server",
      default: "993",
      schema: SettingType.integer({ min: 1, max: 65535 }),
      description: "IMAP port (993 with TLS, 143 with STARTTLS or plain)"
    },
    {
      key: "MAILBOX_IMAP_SECURITY",
      label: "Security",
      type: "enum",
      choices: ["tls", "starttls", "plain"],
      group: "Server",
      default: "tls",
      schema: SettingType.choice("tls", "starttls", "plain"),
      description:
        "tls (implicit TLS), starttls (upgrade required) or plain (no encryption; only for a server on this machine or a trusted network)"
    },
    {
      key: "MAILBOX_IMAP_CA_FILE",
      label: "CA certificate file",
      group: "Server",
      advanced: true,
      description: "A PEM file of the CA that signed a self-hosted server's certificate"
    },
    {
      key: "MAILBOX_FOLDERS",
      label: "Folders",
      type: "list",
      group: "Polling",
      default: "INBOX",
      schema: SettingType.list,
      description: "Folders to poll, comma-separated"
    },
    {
      key: "MAILBOX_POLL_INTERVAL",
      label: "Poll every (seconds)",
      type: "number",
      group: "Polling",
      default: "60",
      schema: SettingType.positive,
      description: "Seconds between polls"
    },
    {
      key: "MAILBOX_MAX_PER_POLL",
      label: "Mails per poll",
      type: "number",
      group: "Polling",
      advanced: true,
      default: "25",
      schema: SettingType.integer({ min: 1, max: 1000 }),
      description: "At most this many mails per poll cycle"
    },
    {
      key: "MAILBOX_INITIAL_FETCH",
      label: "On the first start, fetch",
      group: "Polling",
      advanced: true,
      default: "new",
      schema: InitialFetch,
      description: "On the first start: new (only mail arriving after it), recent:N (the last N of each folder) or all"
    },
    {
      key: "MAILBOX_PATTERN_QUARANTINE_LEVEL",
      label: "Quarantine at",
      type: "enum",
      choices: ["low", "medium", "high"],
      group: "Screening",
      default: "high",
      schema: SettingType.choice("low", "medium", "high"),
      description: "A deterministic flag at or above this level (low, medium, high) quarantines"
    },
    {
      key: "INGESTION_CLASSIFIER_MODEL",
      label: "Classifier model",
      group: "Screening",
      advanced: true,
      description: "The screening classifier's model; default: the server's default model"
    },
    {
      key: "MAILBOX_CLASSIFIER_TIMEOUT_MS",
      label: "Classifier timeout (ms)",
      type: "number",
      group: "Screening",
      advanced: true,
      default: "30000",
      schema: SettingType.positive,
      description: "How long one classifier attempt may take"
    },
    {
      key: "MAILBOX_CLASSIFIER_RETRY_MS",
      label: "Classifier retry wait (ms)",
      type: "number",
      group: "Screening",
      advanced: true,
      default: "2000",
      schema: SettingType.positive,
      description: "First wait between classifier attempts (three retries, doubling)"
    },
    {
      key: "MAILBOX_START_DELAY_MS",
      label: "Start delay (ms)",
      type: "number",
      group: "Polling",
      advanced: true,
      default: "5000",
      schema: SettingType.integer({ min: 0 }),
      description: "How long the poller waits after the server starts"
    }
  ],
  sidebar_section: {
    id: "mailbox",
    title: "Mailbox",
    icon: "MessageSquare",
    items: [
      { label: "Status", href: "/integrations/mailbox/status", icon: "Activity" },
      { label: "Quarantine", href: "/integrations/mailbox/quarantine", icon: "ShieldCheck" }
    ],
    readiness_endpoint: "/integrations/mailbox/ping",
    readiness_field: "configured"
  },
  activation: { carapaces: ["mailbox-feeds"], templates: ["email-digest"] },
  // Test connection: logs in and lists the folders.
  check: checkConnection
})
