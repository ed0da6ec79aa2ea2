/** SQL for channel integration bindings. */
import { repository } from "../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface BindingRow {
  readonly id: string
  readonly channel_id: string
  readonly integration_type: string
  readonly client_id: string
  readonly wake_words: unknown
  readonly use_bot_wake_word: boolean
  readonly hud_preset: "default" | "none"
  readonly created_at: Date
}

export interface NewBinding {
  readonly id: string
  readonly channel_id: string
  readonly integration_type: string
  readonly client_id: string
  readonly wake_words: ReadonlyArray<string>
  readonly use_bot_wake_word: boolean
  readonly hud_preset: "default" | "none"
}

export class BindingsRepo extends Effect.Service<BindingsRepo>()("cairn/BindingsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(
      "b.id, b.channel_id, b.integration_type, b.client_id, b.wake_words, b.use_bot_wake_word, b.hud_preset, b.created_at"
    )
    return repository("BindingsRepo", {
      /** Inserts unless the same (channel, type, client id) exists; answers the row or undefined. */
      insert: (binding: NewBinding) =>
        Effect.map(
          sql<BindingRow>`INSERT INTO channel_integrations AS b (id, channel_id, integration_type, client_id, wake_words, use_bot_wake_word, hud_preset)
            VALUES (${binding.id}, ${binding.channel_id}, ${binding.integration_type}, ${binding.client_id},
                    ${JSON.stringify(binding.wake_words)}::jsonb, ${binding.use_bot_wake_word}, ${binding.hud_preset})
            ON CONFLICT (channel_id, integration_type, client_id) DO NOTHING
            RETURNING ${columns}`,
          (rows) => rows[0]
        ),
      forChannel: (channelId: string) =>
        sql<BindingRow>`SELECT ${columns} FROM channel_integrations b WHERE b.channel_id = ${channelId} ORDER BY b.created_at, b.id`,
      byClientId: (clientId: string) =>
        sql<BindingRow & { readonly bot_id: string }>`SELECT ${columns}, c.bot_id FROM channel_integrations b
          JOIN channels c ON c.id = b.channel_id
          WHERE b.client_id = ${clientId} ORDER BY b.created_at, b.id`,
      byIntegrationType: (integrationType: string) =>
        sql<BindingRow>`SELECT ${columns} FROM channel_integrations b WHERE b.integration_type = ${integrationType} ORDER BY b.created_at, b.id`,
      remove: (channelId: string, bindingId: string) =>
        Effect.map(
          sql<{ id: string }>`DELETE FROM channel_integrations WHERE channel_id = ${channelId} AND id = ${bindingId} RETURNING id`,
          (rows) => rows.length === 1
        )
    })
  })
}) {}
