/** SQL for the widget's per-bot settings (migration 0087): the origins allowed to embed it. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../../db/Repository.ts"

export const WidgetSettingsRow = Schema.Struct({
  bot_id: Schema.String,
  allowed_origins: Schema.Array(Schema.String),
  updated_at: Schema.DateFromSelf
})
export type WidgetSettingsRow = typeof WidgetSettingsRow.Type

export const WidgetLineRow = Schema.Struct({
  session_id: Schema.String,
  role: Schema.Literal("user", "assistant"),
  content: Schema.NullOr(Schema.String),
  attachments: Schema.NullOr(Schema.Array(Schema.Unknown)),
  created_at: Schema.DateFromSelf
})

export class WidgetSettingsRepo extends Effect.Service<WidgetSettingsRepo>()("cairn/WidgetSettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(WidgetSettingsRow)
    return repository("WidgetSettingsRepo", {
      find: (botId: string) =>
        rows(sql`SELECT bot_id, allowed_origins, updated_at FROM widget_settings WHERE bot_id = ${botId}`).pipe(Effect.map(firstRow)),
      /** Replaces the bot's allowed origins. */
      setOrigins: (botId: string, origins: ReadonlyArray<string>) =>
        rows(sql`INSERT INTO widget_settings (bot_id, allowed_origins) VALUES (${botId}, ${JSON.stringify(origins)}::jsonb)
                 ON CONFLICT (bot_id) DO UPDATE SET allowed_origins = excluded.allowed_origins, updated_at = now()
                 RETURNING bot_id, allowed_origins, updated_at`).pipe(Effect.map((list) => list[0]!)),
      /**
       * The session a widget's visitor chats in, found by the key the chat made it under
       * (sessions/Sessions.ts `getOrCreate`: client id, bot, owner), and its newest user and
       * assistant messages, oldest first; none before the first message.
       */
      visitorLines: (defaultKey: string, limit: number) =>
        decodeRows(WidgetLineRow)(
          sql`SELECT m.session_id, m.role, m.content, m.attachments, m.created_at
              FROM sessions s JOIN messages m ON m.session_id = s.id
              WHERE s.default_for = ${defaultKey} AND m.role IN ('user', 'assistant')
              ORDER BY m.seq DESC LIMIT ${limit}`
        ).pipe(Effect.map((list) => [...list].reverse())),
      /** The visitor's session id, when there is one. */
      visitorSession: (defaultKey: string) =>
        Effect.map(sql<{ id: string }>`SELECT id FROM sessions WHERE default_for = ${defaultKey}`, (list) => list[0]?.id ?? null)
    })
  })
}) {}
