/**
 * Who reaches a session. The static key, API keys holding `sessions:read` and admin users reach every
 * session; any other caller reaches the sessions it created: a signed-in member only its own
 * (`user:<id>`), whichever surface made them, and a widget token only its own, and only on its bot,
 * whatever scopes they carry. Sessions the server made itself (channels, integrations, delegation)
 * have no owner and are reached only by callers that reach every session.
 */
import { Effect } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import { grants } from "../auth/Scopes.ts"
import { Forbidden } from "../contract/Errors.ts"

/** The owner recorded on the sessions a caller creates. */
export const ownerOf = (principal: PrincipalShape): string =>
  principal.owner ?? (principal.kind === "static_key" ? "static" : `${principal.kind}:${principal.id}`)

/**
 * The one place that decides whether a caller reaches every session rather than only its own. A
 * signed-in user needs `admin` (a member's `sessions:read` is for its own conversations); only admins
 * make API keys, so a key's `sessions:read` is an admin's grant.
 */
export const reachesEverySession = (principal: PrincipalShape): boolean => {
  switch (principal.kind) {
    case "widget":
      return false
    case "user":
      return grants(principal.scopes, "admin")
    default:
      return grants(principal.scopes, "sessions:read")
  }
}

/**
 * Whether the caller decides every approval rather than only those its own runs ask for: whoever
 * reaches every session, and a key that reads the whole approval inbox (`approvals:read`). `chat`
 * grants `approvals:write` for a client's own runs only, so a chat key, a member and a widget token
 * decide the approvals of the sessions they reach.
 */
export const decidesEveryApproval = (principal: PrincipalShape): boolean =>
  reachesEverySession(principal) ||
  (principal.kind !== "widget" && principal.kind !== "user" && grants(principal.scopes, "approvals:read"))

/** The bot a widget token is confined to; null for every other caller. */
export const confinedBot = (principal: PrincipalShape): string | null => (principal.kind === "widget" ? principal.id : null)

export const mayReach = (principal: PrincipalShape, session: { readonly owner: string | null; readonly bot_id: string }): boolean =>
  reachesEverySession(principal) ||
  (session.owner === ownerOf(principal) && (confinedBot(principal) ?? session.bot_id) === session.bot_id)

/**
 * Whether the caller owns the session (an admin owns every one): what adding to a conversation
 * takes (its documents). Reaching a session (a `sessions:read` key) is not owning it.
 */
export const owns = (principal: PrincipalShape, session: { readonly owner: string | null; readonly bot_id: string }): boolean =>
  grants(principal.scopes, "admin") || (session.owner === ownerOf(principal) && mayReach(principal, session))

/** 403 unless the caller reaches the session. */
export const requireReach = (principal: PrincipalShape, session: { readonly owner: string | null; readonly bot_id: string }) =>
  mayReach(principal, session) ? Effect.void : Effect.fail(new Forbidden({ detail: "This session belongs to another caller" }))

/** 403 when a widget token names a bot other than its own (no other caller is confined to a bot). */
export const requireBotAllowed = (principal: PrincipalShape, botId: string) => {
  const bot = confinedBot(principal)
  return bot === null || bot === botId
    ? Effect.void
    : Effect.fail(new Forbidden({ detail: `This token is confined to its own bot, not ${botId}` }))
}
