import { defineSetup } from "../../src/sdk/index.ts"

export const SETUP = defineSetup({
  env_vars: [
    {
      key: "MAILBOX_EMAIL",
      required: true,
      description:
        "The mailbox address (also its IMAP user name unless MAILBOX_IMAP_USER says otherwise); channels bind it as mailbox:<address>"
    },
    {
      key: "MAILBOX_APP_PASSWORD",
      required: true,
      secret: true,
      description: "An app password for IMAP (the account needs two-step verification); OAuth is not supported"
    },
    { key: "MAILBOX_IMAP_USER", description: "The IMAP login when it is not the address" },
    { key: "MAILBOX_IMAP_HOST", default: "imap.gmail.com", description: "IMAP server" },
    { key: "MAILBOX_IMAP_PORT", default: "993", description: "IMAP port (993 with TLS, 143 with STARTTLS or plain)" },
    {
      key: "MAILBOX_IMAP_SECURITY",
      default: "tls",
      description:
        "tls (implicit TLS), starttls (upgrade required) or plain (no encryption; only for a server on this machine or a trusted network)"
    },
    { key: "MAILBOX_IMAP_CA_FILE", description: "A PEM file of the CA that signed a self-hosted server's certificate" },
    { key: "MAILBOX_FOLDERS", default: "INBOX", description: "Folders to poll, comma-separated" },
    { key: "MAILBOX_POLL_INTERVAL", default: "60", description: "Seconds between polls" },
    { key: "MAILBOX_MAX_PER_POLL", default: "25", description: "At most this many mails per poll cycle" },
    {
      key: "MAILBOX_INITIAL_FETCH",
      default: "new",
      description: "On the first start: new (only mail arriving after it), recent:N (the last N of each folder) or all"
    },
    {
      key: "MAILBOX_PATTERN_QUARANTINE_LEVEL",
      default: "high",
      description: "A deterministic flag at or above this level (low, medium, high) quarantines"
    },
    { key: "INGESTION_CLASSIFIER_MODEL", description: "The screening classifier's model; default: the server's default model" },
    { key: "MAILBOX_CLASSIFIER_TIMEOUT_MS", default: "30000", description: "How long one classifier attempt may take" },
    {
      key: "MAILBOX_CLASSIFIER_RETRY_MS",
      default: "2000",
      description: "First wait between classifier attempts (three retries, doubling)"
    },
    { key: "MAILBOX_START_DELAY_MS", default: "5000", description: "How long the poller waits after the server starts" }
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
  activation: { carapaces: ["mailbox-feeds"], templates: ["email-digest"] }
})
