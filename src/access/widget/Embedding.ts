/**
 * Where a bot's widget may be embedded, and the visitor's conversation shown again after the host
 * page reloads.
 *
 * The origins allowed to frame `/widget/<bot>` are WIDGET_EMBED_ORIGINS (every bot's, the server's
 * setting) and the bot's own list, kept in the database and edited in the console, so allowing a
 * site takes effect on its next page load, without a restart.
 *
 * A visitor's conversation is the session of (client id, bot, widget identity) the chat already
 * keys sessions by (sessions/Sessions.ts; read here by that key, as this folder sits below sessions): the embed script keeps a random visitor id on the
 * host's origin and the widget chats as `widget:<visitor id>`, so a reload finds the same session.
 */
import { Effect } from "effect"
import type { PrincipalShape } from "../../auth/Principal.ts"
import type { Bots } from "../../bots/Bots.ts"
import { Forbidden } from "../../contract/Errors.ts"
import { type UpdateWidgetSettings, WidgetConversation, WidgetLine, WidgetSettings } from "./Model.ts"
import type { WidgetSettingsRepo } from "./Repo.ts"

/** How many of the newest messages a reloaded widget shows again. */
const conversationLines = 100

export const makeEmbedding = (deps: {
  readonly repo: WidgetSettingsRepo
  readonly bots: Bots
  readonly defaultOrigins: ReadonlyArray<string>
}) => {
  const { repo, bots, defaultOrigins } = deps

  const settings = (botId: string) =>
    Effect.gen(function*() {
      const bot = yield* bots.get(botId)
      const row = yield* repo.find(bot.id)
      return new WidgetSettings({
        bot_id: bot.id,
        allowed_origins: row?.allowed_origins ?? [],
        default_origins: defaultOrigins,
        has_api_key: Boolean(bot.api_key_id),
        updated_at: row?.updated_at ?? null
      })
    })

  /** Replaces the bot's allowed origins (duplicates dropped, order kept). */
  const setOrigins = (botId: string, input: UpdateWidgetSettings) =>
    Effect.gen(function*() {
      const bot = yield* bots.get(botId)
      yield* repo.setOrigins(bot.id, [...new Set(input.allowed_origins)])
      return yield* settings(bot.id)
    })

  /** Every origin that may frame the bot's widget now; an unknown bot has only the defaults. */
  const embedOrigins = (botId: string) =>
    Effect.map(repo.find(botId), (row) => [...new Set([...defaultOrigins, ...(row?.allowed_origins ?? [])])])

  /**
   * The widget's session for (client id, bot), its user and assistant lines, newest last. Only a
   * widget token has one, on its own bot: its owner is the token's widget identity.
   */
  const conversation = (principal: PrincipalShape, botId: string, clientId: string) =>
    Effect.gen(function*() {
      if (principal.kind !== "widget" || !principal.owner) {
        return yield* new Forbidden({ detail: "Only a widget token has a visitor's conversation" })
      }
      if (principal.id !== botId) return yield* new Forbidden({ detail: `This token is confined to its own bot, not ${botId}` })
      // The key sessions/Sessions.ts makes a caller's (client id, bot) session under.
      const key = `${clientId}\u0001${botId}\u0001${principal.owner}`
      const sessionId = yield* repo.visitorSession(key)
      if (sessionId === null) return new WidgetConversation({ session_id: null, lines: [] })
      const rows = yield* repo.visitorLines(key, conversationLines)
      const lines = rows.flatMap((row) =>
        (row.content ?? "") !== "" || (row.attachments?.length ?? 0) > 0
          ? [
            new WidgetLine({
              role: row.role,
              text: row.content ?? "",
              attachments: row.attachments?.length ?? 0,
              created_at: row.created_at
            })
          ]
          : []
      )
      return new WidgetConversation({ session_id: sessionId, lines })
    })

  return { settings, setOrigins, embedOrigins, conversation } as const
}
