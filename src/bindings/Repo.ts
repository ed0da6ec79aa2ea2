/** SQL for channel integration bindings. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { Binding } from "./Model.ts"

/** A binding as stored: the API's `Binding` as the driver hands it over (its type side: timestamps as `Date`, jsonb parsed). */
export const BindingRow = Schema.typeSchema(Schema.Struct(Binding.fields))
export type BindingRow = typeof BindingRow.Type
/** A binding with its channel's bot, for routing an incoming message. */
const RoutedBindingRow = BindingRow.pipe(Schema.extend(Schema.Struct({ bot_id: Schema.String })))

/** A binding as created: the database fills in its time. */
export type NewBinding = Omit<BindingRow, "created_at">

export class BindingsRepo extends Effect.Service<BindingsRepo>()("cairn/BindingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(
      "b.id, b.channel_id, b.integration_type, b.client_id, b.wake_words, b.use_bot_wake_word, b.hud_preset, b.created_at"
    )
    const bindingRows = decodeRows(BindingRow)
    return repository("BindingsRepo", {
      /** Inserts unless the same (channel, type, client id) exists; answers the row or undefined. */
      insert: (binding: NewBinding) =>
        Effect.map(
          bindingRows(
            sql`INSERT INTO channel_integrations AS b (id, channel_id, integration_type, client_id, wake_words, use_bot_wake_word, hud_preset)
            VALUES (${binding.id}, ${binding.channel_id}, ${binding.integration_type}, ${binding.client_id},
                    ${JSON.stringify(binding.wake_words)}::jsonb, ${binding.use_bot_wake_word}, ${binding.hud_preset})
            ON CONFLICT (channel_id, integration_type, client_id) DO NOTHING
            RETURNING ${columns}`
          ),
          firstRow
        ),
      forChannel: (channelId: string) =>
        sql`SELECT ${columns} FROM channel_integrations b WHERE b.channel_id = ${channelId} ORDER BY b.created_at, b.id`.pipe(
          bindingRows
        ),
      byClientId: (clientId: string) =>
        sql`SELECT ${columns}, c.bot_id FROM channel_integrations b
          JOIN channels c ON c.id = b.channel_id
          WHERE b.client_id = ${clientId} ORDER BY b.created_at, b.id`.pipe(decodeRows(RoutedBindingRow)),
      byIntegrationType: (integrationType: string) =>
        sql`SELECT ${columns} FROM channel_integrations b WHERE b.integration_type = ${integrationType} ORDER BY b.created_at, b.id`.pipe(
          bindingRows
        ),
      /** Changes the fields given (the others kept); answers the row, or undefined when there is none. */
      update: (
        channelId: string,
        bindingId: string,
        change: {
          readonly wake_words?: ReadonlyArray<string>
          readonly use_bot_wake_word?: boolean
          readonly hud_preset?: "default" | "none"
        }
      ) =>
        Effect.map(
          bindingRows(sql`UPDATE channel_integrations AS b SET
              wake_words = COALESCE(${change.wake_words === undefined ? null : JSON.stringify(change.wake_words)}::jsonb, b.wake_words),
              use_bot_wake_word = COALESCE(${change.use_bot_wake_word ?? null}::boolean, b.use_bot_wake_word),
              hud_preset = COALESCE(${change.hud_preset ?? null}::text, b.hud_preset)
            WHERE b.channel_id = ${channelId} AND b.id = ${bindingId}
            RETURNING ${columns}`),
          firstRow
        ),
      remove: (channelId: string, bindingId: string) =>
        Effect.map(
          sql`DELETE FROM channel_integrations WHERE channel_id = ${channelId} AND id = ${bindingId} RETURNING id`,
          (rows) => rows.length === 1
        )
    })
  })
}) {}
