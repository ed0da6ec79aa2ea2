/** SQL for carapaces, their channel attachments and the carapaces integrations activate. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import type { CarapaceConfig } from "./Model.ts"

/** The configuration is one jsonb document, validated by the service. */
export const CarapaceRow = Schema.Struct({
  id: Schema.String,
  config: Schema.Unknown,
  source: Schema.Literal("file", "api"),
  origin: Schema.String,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type CarapaceRow = typeof CarapaceRow.Type

const CarapaceIdRow = Schema.Struct({ carapace_id: Schema.String })

export class CarapacesRepo extends Effect.Service<CarapacesRepo>()("cairn/CarapacesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const configJson = (config: CarapaceConfig) => {
      const { id: _id, ...rest } = config
      return JSON.stringify(rest)
    }
    const columns = sql.literal("id, config, source, origin, created_at, updated_at")
    const carapaceRows = decodeRows(CarapaceRow)
    const carapaceIds = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
      Effect.map(decodeRows(CarapaceIdRow)(query), (rows) => rows.map((row) => row.carapace_id))
    return repository("CarapacesRepo", {
      list: carapaceRows(sql`SELECT ${columns} FROM carapaces ORDER BY id`),
      find: (id: string) => sql`SELECT ${columns} FROM carapaces WHERE id = ${id}`.pipe(carapaceRows, Effect.map(firstRow)),
      /** Inserts; answers false when the id is taken. */
      insert: (config: CarapaceConfig) =>
        Effect.map(
          sql`INSERT INTO carapaces (id, config, source, origin) VALUES (${config.id}, ${configJson(config)}::jsonb, 'api', 'api')
              ON CONFLICT (id) DO NOTHING RETURNING id`,
          (rows) => rows.length === 1
        ),
      /** A file's carapace replaces the stored one unless the API has taken it over. */
      syncFromFile: (config: CarapaceConfig, origin: string) =>
        sql`INSERT INTO carapaces (id, config, source, origin) VALUES (${config.id}, ${configJson(config)}::jsonb, 'file', ${origin})
            ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, origin = EXCLUDED.origin, updated_at = now()
            WHERE carapaces.source = 'file' AND (carapaces.config <> EXCLUDED.config OR carapaces.origin <> EXCLUDED.origin)`.pipe(
          Effect.asVoid
        ),
      update: (config: CarapaceConfig) =>
        Effect.map(
          sql`UPDATE carapaces SET config = ${configJson(config)}::jsonb, source = 'api', updated_at = now()
              WHERE id = ${config.id} RETURNING id`,
          (rows) => rows.length === 1
        ),
      /** Deletes the carapace and its channel attachments together. */
      remove: (id: string) =>
        sql.withTransaction(
          Effect.zipRight(
            sql`DELETE FROM channel_carapaces WHERE carapace_id = ${id}`,
            Effect.map(sql`DELETE FROM carapaces WHERE id = ${id} RETURNING id`, (rows) => rows.length === 1)
          )
        ),
      forChannel: (channelId: string) =>
        carapaceIds(sql`SELECT carapace_id FROM channel_carapaces WHERE channel_id = ${channelId} ORDER BY position`),
      setForChannel: (channelId: string, ids: ReadonlyArray<string>) =>
        sql.withTransaction(
          Effect.zipRight(
            sql`DELETE FROM channel_carapaces WHERE channel_id = ${channelId}`,
            Effect.forEach(
              ids,
              (id, position) =>
                sql`INSERT INTO channel_carapaces (channel_id, carapace_id, position) VALUES (${channelId}, ${id}, ${position})`,
              { discard: true }
            )
          )
        ),
      setActivated: (integrationId: string, ids: ReadonlyArray<string>) =>
        sql.withTransaction(
          Effect.zipRight(
            sql`DELETE FROM integration_carapaces WHERE integration_id = ${integrationId}`,
            Effect.forEach(
              ids,
              (id, position) =>
                // Two processes starting at once activate the same set: the later one's rows win.
                sql`INSERT INTO integration_carapaces (integration_id, carapace_id, position) VALUES (${integrationId}, ${id}, ${position})
                    ON CONFLICT (integration_id, carapace_id) DO UPDATE SET position = EXCLUDED.position`,
              { discard: true }
            )
          )
        ),
      /** The carapaces activated by any of the integrations, by integration then manifest order. */
      activatedFor: (integrationIds: ReadonlyArray<string>) =>
        integrationIds.length === 0
          ? Effect.succeed([] as Array<string>)
          : carapaceIds(
            sql`SELECT carapace_id FROM integration_carapaces
                WHERE ${sql.in("integration_id", integrationIds)} ORDER BY integration_id, position`
          ),
      activated: (integrationId: string) =>
        carapaceIds(sql`SELECT carapace_id FROM integration_carapaces WHERE integration_id = ${integrationId} ORDER BY position`)
    })
  })
}) {}
