import { defineSetup, type EnvVarSpec, SettingType } from "../../src/sdk/index.ts"
import { checkConnection } from "./check.ts"

/** The secrets and the account: diagnose reports each one missing by itself. */
export const connectionSettings = [
  {
    key: "GITHUB_WEBHOOK_SECRET",
    label: "Webhook secret",
    type: "secret",
    group: "Account",
    required: true,
    secret: true,
    description: "The webhook's secret: GitHub signs each delivery with it (X-Hub-Signature-256)"
  },
  {
    key: "GITHUB_TOKEN",
    label: "Token",
    type: "secret",
    group: "Account",
    required: true,
    secret: true,
    description: "A token that reads pull requests and writes issue comments (fine-grained: Pull requests read, Issues write)"
  },
  {
    key: "GITHUB_BOT_LOGIN",
    label: "Bot account",
    group: "Account",
    required: true,
    description: "The account the token belongs to: @<it> in a comment calls the bot"
  }
] as const satisfies ReadonlyArray<EnvVarSpec>

/** Where the API is and how the integration behaves: each has a default or is optional, and a type. */
export const behaviourSettings = [
  {
    key: "GITHUB_API_URL",
    label: "API URL",
    type: "url",
    group: "Account",
    advanced: true,
    default: "https://api.github.com",
    schema: SettingType.url,
    description: "The REST API: https://api.github.com, https://<host>/api/v3 (Enterprise), https://<host>/api/v1 (Gitea, Forgejo)"
  },
  {
    key: "GITHUB_REVIEW_ON_SYNCHRONIZE",
    label: "Review each push",
    type: "boolean",
    group: "Reviews",
    default: "false",
    schema: SettingType.boolean,
    description: "Also review a pull request each time commits are pushed to it (action synchronize)"
  },
  {
    key: "GITHUB_EVERY_COMMENT_REPOS",
    label: "Every comment calls the bot in",
    type: "list",
    group: "Reviews",
    schema: SettingType.list,
    description: "Repositories (owner/repo, or *) where every issue comment calls the bot, not only those mentioning it"
  },
  {
    key: "GITHUB_MAX_PATCH_CHARS",
    label: "Longest patch (characters)",
    type: "number",
    group: "Reviews",
    advanced: true,
    default: "60000",
    schema: SettingType.integer({ min: 1000 }),
    description: "get_pull_request returns at most this many characters of patches (more is cut, and said so)"
  }
] as const satisfies ReadonlyArray<EnvVarSpec>

export const SETUP = defineSetup({
  env_vars: [...connectionSettings, ...behaviourSettings],
  webhook: {
    path: "/integrations/github/webhook",
    description: "GitHub's webhook: content type application/json, the secret GITHUB_WEBHOOK_SECRET"
  },
  sidebar_section: {
    id: "github",
    title: "GitHub",
    icon: "Github",
    items: [
      { label: "Diagnose", href: "/integrations/github/diagnose", icon: "Activity" },
      { label: "Status", href: "/integrations/github/status", icon: "Server" }
    ],
    readiness_endpoint: "/integrations/github/diagnose",
    readiness_field: "ready"
  },
  // Test connection: checks the token.
  check: checkConnection
})
