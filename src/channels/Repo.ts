/** SQL for channels. */
import { repository } from "../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ChannelFilter } from "./Model.ts"

export interface ChannelRow {
  readonly id: string
  readonly name: string
  readonly bot_id: string
  readonly client_id: string
  readonly require_mention: boolean
  readonly passive_memory: boolean
  readonly workspace_enabled: boolean
  readonly active_session_id: string | null
  readonly model_override: string | null
  readonly integration_config: unknown
  readonly created_at: Date
  readonly updated_at: Date
}

/** A row as created: what the database fills in or a later change sets is left out. */
export type NewChannel = Omit<ChannelRow, "active_session_id" | "integration_config" | "created_at" | "updated_at">

/** The settable columns of an update; absent keys are left alone. */
export type ChannelChanges = Partial<
  Pick<NewChannel, "name" | "require_mention" | "passive_memory" | "workspace_enabled" | "model_override">
>

export class ChannelsRepo extends Effect.Service<ChannelsRepo>()("cairn/ChannelsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(
      "id, name, bot_id, client_id, require_mention, passive_memory, workspace_enabled, active_session_id, model_override, integration_config, created_at, updated_at"
    )
    const first = (rows: ReadonlyArray<ChannelRow>) => rows[0]

    return repository("ChannelsRepo", {
      /** Inserts unless (client_id, bot_id) is taken; answers the row, or undefined when taken. */
      insert: (channel: NewChannel) =>
        Effect.map(
          sql<ChannelRow>`INSERT INTO channels (id, name, bot_id, client_id, require_mention, passive_memory, workspace_enabled, model_override)
            VALUES (${channel.id}, ${channel.name}, ${channel.bot_id}, ${channel.client_id}, ${channel.require_mention},
                    ${channel.passive_memory}, ${channel.workspace_enabled}, ${channel.model_override})
            ON CONFLICT (client_id, bot_id) DO NOTHING
            RETURNING ${columns}`,
          first
        ),
      find: (id: string) => Effect.map(sql<ChannelRow>`SELECT ${columns} FROM channels WHERE id = ${id}`, first),
      findByClient: (clientId: string, botId: string) =>
        Effect.map(
          sql<ChannelRow>`SELECT ${columns} FROM channels WHERE client_id = ${clientId} AND bot_id = ${botId}`,
          first
        ),
      list: (filter: ChannelFilter) =>
        sql<ChannelRow>`SELECT ${columns} FROM channels
          WHERE (${filter.bot_id ?? null}::text IS NULL OR bot_id = ${filter.bot_id ?? null})
            AND (${filter.client_id ?? null}::text IS NULL OR client_id = ${filter.client_id ?? null})
          ORDER BY created_at, id
          LIMIT ${filter.limit} OFFSET ${filter.offset}`,
      update: (id: string, changes: ChannelChanges) =>
        Effect.map(
          sql<ChannelRow>`UPDATE channels SET ${sql.update(changes)}, updated_at = now() WHERE id = ${id} RETURNING ${columns}`,
          first
        ),
      /** Answers whether a channel was there to update. */
      setActiveSession: (id: string, sessionId: string | null) =>
        Effect.map(
          sql<{ id: string }>`UPDATE channels SET active_session_id = ${sessionId}, updated_at = now() WHERE id = ${id} RETURNING id`,
          (rows) => rows.length === 1
        ),
      remove: (id: string) =>
        Effect.map(sql<{ id: string }>`DELETE FROM channels WHERE id = ${id} RETURNING id`, (rows) => rows.length === 1)
    })
  })
}) {}
