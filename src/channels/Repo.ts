/** SQL for channels. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CountRow, decodeRows, firstRow, repository } from "../db/Repository.ts"
import { Channel, type ChannelFilter } from "./Model.ts"

/** A channel as stored: the API's `Channel` as the driver hands it over (its type side: timestamps as `Date`, jsonb parsed). */
export const ChannelRow = Schema.typeSchema(Schema.Struct(Channel.fields).pipe(Schema.omit("integration")))
export type ChannelRow = typeof ChannelRow.Type

/** A row as created: what the database fills in or a later change sets is left out. */
export type NewChannel = Omit<ChannelRow, "active_session_id" | "integration_config" | "retrieval" | "created_at" | "updated_at">

/** The settable columns of an update; absent keys are left alone. */
export type ChannelChanges = Partial<
  Pick<NewChannel, "name" | "require_mention" | "passive_memory" | "workspace_enabled" | "model_override"> & {
    /** JSON text of the override, or null to clear it. */
    readonly retrieval: string | null
  }
>

export class ChannelsRepo extends Effect.Service<ChannelsRepo>()("cairn/ChannelsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(
      "id, name, bot_id, client_id, require_mention, passive_memory, workspace_enabled, active_session_id, model_override, retrieval, integration_config, created_at, updated_at"
    )
    const channelRows = decodeRows(ChannelRow)
    /** The channels a list filter selects (a bot's, a client's, or all). */
    const matching = (filter: Pick<ChannelFilter, "bot_id" | "client_id" | "client_prefix">) =>
      sql`(${filter.bot_id ?? null}::text IS NULL OR bot_id = ${filter.bot_id ?? null})
        AND (${filter.client_id ?? null}::text IS NULL OR client_id = ${filter.client_id ?? null})
        AND (${filter.client_prefix ?? null}::text IS NULL OR starts_with(client_id, ${filter.client_prefix ?? null}))`

    return repository("ChannelsRepo", {
      /** Inserts unless (client_id, bot_id) is taken; answers the row, or undefined when taken. */
      insert: (channel: NewChannel) =>
        sql`INSERT INTO channels (id, name, bot_id, client_id, require_mention, passive_memory, workspace_enabled, model_override)
            VALUES (${channel.id}, ${channel.name}, ${channel.bot_id}, ${channel.client_id}, ${channel.require_mention},
                    ${channel.passive_memory}, ${channel.workspace_enabled}, ${channel.model_override})
            ON CONFLICT (client_id, bot_id) DO NOTHING
            RETURNING ${columns}`.pipe(channelRows, Effect.map(firstRow)),
      find: (id: string) => sql`SELECT ${columns} FROM channels WHERE id = ${id}`.pipe(channelRows, Effect.map(firstRow)),
      findByClient: (clientId: string, botId: string) =>
        sql`SELECT ${columns} FROM channels WHERE client_id = ${clientId} AND bot_id = ${botId}`.pipe(
          channelRows,
          Effect.map(firstRow)
        ),
      list: (filter: ChannelFilter) =>
        sql`SELECT ${columns} FROM channels WHERE ${matching(filter)}
          ORDER BY created_at, id
          LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(channelRows),
      count: (filter: Pick<ChannelFilter, "bot_id" | "client_id" | "client_prefix">) =>
        sql`SELECT count(*)::int AS n FROM channels WHERE ${matching(filter)}`.pipe(
          decodeRows(CountRow),
          Effect.map((rows) => rows[0]?.n ?? 0)
        ),
      update: (id: string, changes: ChannelChanges) =>
        sql`UPDATE channels SET ${sql.update(changes)}, updated_at = now() WHERE id = ${id} RETURNING ${columns}`.pipe(
          channelRows,
          Effect.map(firstRow)
        ),
      /** Answers whether a channel was there to update. */
      setActiveSession: (id: string, sessionId: string | null) =>
        Effect.map(
          sql`UPDATE channels SET active_session_id = ${sessionId}, updated_at = now() WHERE id = ${id} RETURNING id`,
          (rows) => rows.length === 1
        ),
      remove: (id: string) => Effect.map(sql`DELETE FROM channels WHERE id = ${id} RETURNING id`, (rows) => rows.length === 1)
    })
  })
}) {}
