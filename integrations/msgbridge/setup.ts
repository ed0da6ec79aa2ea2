import { defineSetup, type EnvVarSpec, SettingType } from "../../src/sdk/index.ts"
import { checkConnection } from "./check.ts"

/** Where the chat server is and the secrets it shares: the bridge reports each one missing by itself. */
export const connectionSettings = [
  {
    key: "MSGBRIDGE_SERVER_URL",
    label: "Chat server URL",
    type: "url",
    group: "Connection",
    required: true,
    schema: SettingType.url,
    description: "The chat server's address, e.g. http://192.168.1.20:1234 (its host is allowed through the HTTP guard)"
  },
  {
    key: "MSGBRIDGE_PASSWORD",
    label: "API password",
    type: "secret",
    group: "Connection",
    required: true,
    secret: true,
    description: "The chat server's API password"
  },
  {
    key: "MSGBRIDGE_WEBHOOK_TOKEN",
    label: "Webhook token",
    type: "secret",
    group: "Connection",
    required: true,
    secret: true,
    description: "The shared secret the chat server's webhook URL carries as ?token="
  }
] as const satisfies ReadonlyArray<EnvVarSpec>

/** How the bridge behaves: each has a default and a type. */
export const behaviourSettings = [
  {
    key: "MSGBRIDGE_WAKE_WORDS",
    label: "Wake words",
    type: "list",
    group: "Conversation",
    schema: SettingType.list,
    description: "Wake words for every chat, comma-separated (case-insensitive substrings)"
  },
  {
    key: "MSGBRIDGE_DEFAULT_BOT",
    label: "Legacy client bot",
    group: "Conversation",
    advanced: true,
    default: "default",
    schema: SettingType.text,
    description: "The bot the legacy client answers with"
  },
  {
    key: "MSGBRIDGE_SEND_METHOD",
    label: "Send method",
    type: "enum",
    choices: ["apple-script", "private-api"],
    group: "Connection",
    default: "apple-script",
    schema: SettingType.choice("apple-script", "private-api"),
    description: "apple-script, or private-api when the server's Private API is enabled"
  },
  {
    key: "MSGBRIDGE_ECHO_WINDOW_SECONDS",
    label: "Echo window (seconds)",
    type: "number",
    group: "Conversation",
    advanced: true,
    default: "30",
    schema: SettingType.positive,
    description: "How long a sent text is recognised when it comes back as the account's own message"
  },
  {
    key: "MSGBRIDGE_STALE_SECONDS",
    label: "Stale after (seconds)",
    type: "number",
    group: "Conversation",
    advanced: true,
    default: "300",
    schema: SettingType.positive,
    description: "A pushed message older than this is ignored (a replay after a reconnect)"
  },
  {
    key: "MSGBRIDGE_CATCHUP_MAX_AGE_HOURS",
    label: "Catch up at most (hours)",
    type: "number",
    group: "Conversation",
    advanced: true,
    default: "24",
    schema: SettingType.positive,
    description: "Catch-up answers missed messages at most this old"
  },
  {
    key: "MSGBRIDGE_REPLY_LIMIT",
    label: "Replies per window",
    type: "number",
    group: "Limits",
    advanced: true,
    default: "10",
    schema: SettingType.integer({ min: 1 }),
    description: "Runs a chat may start in one window before its circuit breaker opens"
  },
  {
    key: "MSGBRIDGE_REPLY_WINDOW_SECONDS",
    label: "Reply window (seconds)",
    type: "number",
    group: "Limits",
    advanced: true,
    default: "60",
    schema: SettingType.positive,
    description: "The circuit breaker's window (and how long it stays open)"
  },
  {
    key: "MSGBRIDGE_MAX_MESSAGE_CHARS",
    label: "Longest message (characters)",
    type: "number",
    group: "Limits",
    advanced: true,
    default: "2000",
    schema: SettingType.integer({ min: 100 }),
    description: "A longer reply is split into several messages at about this length"
  },
  {
    key: "MSGBRIDGE_SEND_TIMEOUT_MS",
    label: "Send timeout (ms)",
    type: "number",
    group: "Limits",
    advanced: true,
    default: "30000",
    schema: SettingType.positive,
    description: "How long one send may take before the bridge checks whether it was delivered"
  },
  {
    key: "MSGBRIDGE_HEALTH_INTERVAL_SECONDS",
    label: "Ping every (seconds)",
    type: "number",
    group: "Connection",
    advanced: true,
    default: "30",
    schema: SettingType.positive,
    description: "How often the chat server is pinged (a recovery triggers a catch-up)"
  },
  {
    key: "MSGBRIDGE_LEGACY_CLIENT",
    label: "Legacy client",
    type: "boolean",
    group: "Conversation",
    advanced: true,
    default: "true",
    schema: SettingType.boolean,
    description: "Deprecated: also read the chat server's Socket.IO stream and answer unbound chats with the default bot"
  }
] as const satisfies ReadonlyArray<EnvVarSpec>

export const SETUP = defineSetup({
  env_vars: [...connectionSettings, ...behaviourSettings],
  webhook: {
    path: "/integrations/msgbridge/webhook?token=<MSGBRIDGE_WEBHOOK_TOKEN>",
    description: "Point the chat server's webhook (new-message events) here"
  },
  sidebar_section: {
    id: "msgbridge",
    title: "Messages",
    icon: "MessageSquare",
    items: [
      { label: "Diagnose", href: "/integrations/msgbridge/diagnose", icon: "Activity" },
      { label: "Status", href: "/integrations/msgbridge/hud/status", icon: "Server" }
    ],
    readiness_endpoint: "/integrations/msgbridge/diagnose",
    readiness_field: "ready"
  },
  // The chat header of a channel bound with the HUD preset `default` shows the connection badge.
  hud: { status_endpoint: "/integrations/msgbridge/hud/status" },
  // Test connection: pings the chat server.
  check: checkConnection
})
