/**
 * The mailbox routes: ping, a live IMAP status, one poll cycle now, and the quarantine review
 * (list, read, release, delete, reprocess).
 */
import { defineRoutes, type IntegrationContext, respond, type RouteDefinition } from "../../src/sdk/index.ts"
import { feedStore } from "./feed.ts"
import { checkConnection, pollOnce } from "./poller.ts"
import { listQuarantine, QuarantineError, readQuarantined, release, remove, reprocess } from "./quarantine.ts"

const reviewing = (
  f: (key: string, cairn: IntegrationContext, headers: Record<string, string | undefined>) => Promise<unknown>
): RouteDefinition["handler"] =>
async (request, cairn) => {
  try {
    return await f(request.params.key ?? "", cairn, request.headers)
  } catch (error) {
    if (error instanceof QuarantineError) return respond(error.status, { detail: error.message })
    throw error
  }
}

export default defineRoutes([
  {
    method: "GET",
    path: "/ping",
    description: "Health check of the mailbox integration: whether its address and password are set",
    scope: "operations:read",
    handler: async (_request, cairn) => {
      const settings = await cairn.settings.all()
      return { status: "ok", configured: Boolean(settings.MAILBOX_EMAIL && settings.MAILBOX_APP_PASSWORD) }
    }
  },
  {
    method: "GET",
    path: "/status",
    description: "Tests the IMAP connection now: connected, address, folder count, the last poll and its error",
    scope: "operations:read",
    handler: async (_request, cairn) => {
      const [connection, poll] = await Promise.all([checkConnection(await cairn.settings.all()), feedStore(cairn.store).pollState()])
      return { ...connection, last_poll: poll ?? null, last_error: connection.error ?? poll?.error ?? null }
    }
  },
  {
    method: "POST",
    path: "/trigger",
    description: "Runs one poll cycle now and answers its counts and items",
    scope: "operations:write",
    handler: async (_request, cairn) => pollOnce(cairn, await cairn.settings.all())
  },
  {
    method: "GET",
    path: "/quarantine",
    description: "Quarantined mails, newest first (headers, layer and reason; not the body)",
    scope: "operations:read",
    handler: async (_request, cairn) => ({ quarantined: await listQuarantine(cairn) })
  },
  {
    method: "GET",
    path: "/quarantine/:key",
    description: "One quarantined mail with its screened body and the flags that stopped it",
    scope: "operations:read",
    handler: reviewing((key, cairn) => readQuarantined(cairn, key))
  },
  {
    method: "POST",
    path: "/quarantine/:key/release",
    description: "Delivers a quarantined mail after a person looked at it",
    scope: "operations:write",
    handler: reviewing((key, cairn) => release(cairn, key, "an operator"))
  },
  {
    method: "POST",
    path: "/quarantine/:key/reprocess",
    description: "Screens a quarantined mail again with the current rules and classifier",
    scope: "operations:write",
    handler: reviewing((key, cairn) => reprocess(cairn, key))
  },
  {
    method: "DELETE",
    path: "/quarantine/:key",
    description: "Deletes a quarantined mail's content; it is never delivered",
    scope: "operations:write",
    handler: reviewing((key, cairn) => remove(cairn, key))
  }
])
