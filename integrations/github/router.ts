/**
 * The integration's routes. The webhook is signed by GitHub with GITHUB_WEBHOOK_SECRET
 * (X-Hub-Signature-256, checked by the framework over the raw body before the handler runs); the
 * others need a key with the scope they declare.
 */
import { defineRoutes } from "../../src/sdk/index.ts"
import { diagnose, status } from "./status.ts"
import { webhook } from "./webhook.ts"

export default defineRoutes([
  {
    method: "POST",
    path: "/webhook",
    secret: { setting: "GITHUB_WEBHOOK_SECRET", signature: { header: "x-hub-signature-256", prefix: "sha256=" } },
    description: "GitHub's webhook (signed with GITHUB_WEBHOOK_SECRET): pull requests, issues, comments and reviews become tasks",
    handler: webhook
  },
  {
    method: "GET",
    path: "/ping",
    description: "Health check",
    scope: "operations:read",
    handler: () => ({ status: "ok", integration: "github" })
  },
  {
    method: "GET",
    path: "/status",
    description: "Settings in use (secrets only as set or not), bound repositories and the last delivery handled",
    scope: "operations:read",
    handler: async (_request, cairn) => status(cairn)
  },
  {
    method: "GET",
    path: "/diagnose",
    description: "Checks metadata, dispatcher, the secret, the token (against GITHUB_BOT_LOGIN) and bindings; says what to fix",
    scope: "operations:read",
    handler: async (_request, cairn) => diagnose(cairn)
  }
])
