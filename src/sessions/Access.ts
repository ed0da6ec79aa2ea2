/**
 * Who reaches a session. The static key and callers holding `sessions:read` reach every session; any
 * other caller reaches the sessions it created; a widget token only its own sessions, and only on
 * its bot, whatever scopes it carries. Sessions the server made itself (channels, integrations,
 * delegation) have no owner and are reached only by callers that reach every session.
 */
import { Effect } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import { grants } from "../auth/Scopes.ts"
import { Forbidden } from "../contract/Errors.ts"

/** The owner recorded on the sessions a caller creates. */
export const ownerOf = (principal: PrincipalShape): string =>
  principal.owner ?? (principal.kind === "static_key" ? "static" : `${principal.kind}:${principal.id}`)

export const reachesEverySession = (principal: PrincipalShape): boolean =>
  principal.kind !== "widget" && grants(principal.scopes, "sessions:read")

/** The bot a widget token is confined to; null for every other caller. */
export const confinedBot = (principal: PrincipalShape): string | null => (principal.kind === "widget" ? principal.id : null)

export const mayReach = (principal: PrincipalShape, session: { readonly owner: string | null; readonly bot_id: string }): boolean =>
  reachesEverySession(principal) ||
  (session.owner === ownerOf(principal) && (confinedBot(principal) ?? session.bot_id) === session.bot_id)

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
