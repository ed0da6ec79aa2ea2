/**
 * SQL for integration settings (values as stored: secrets already sealed by the service) and for
 * the API key each integration's process calls back with. Rows are decoded with schemas; a
 * database failure is a defect here.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { repository } from "../db/Repository.ts"

const SettingRow = Schema.Struct({ key: Schema.String, value: Schema.String })
const ProcessKeyRow = Schema.Struct({ api_key_id: Schema.String, key_value: Schema.String })
const IdRow = Schema.Struct({ integration_id: Schema.String })

export class IntegrationsRepo extends Effect.Service<IntegrationsRepo>()("cairn/IntegrationsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = SqlSchema.findAll({
      Request: Schema.String,
      Result: SettingRow,
      execute: (integrationId) => sql`SELECT key, value FROM integration_settings WHERE integration_id = ${integrationId}`
    })
    const processKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: ProcessKeyRow,
      execute: (integrationId) =>
        sql`SELECT api_key_id, key_value FROM integration_api_keys WHERE integration_id = ${integrationId}`
    })
    const replaceKey = SqlSchema.findOne({
      Request: Schema.Struct({ integrationId: Schema.String, previousKeyId: Schema.String, keyId: Schema.String, sealed: Schema.String }),
      Result: IdRow,
      execute: ({ integrationId, previousKeyId, keyId, sealed }) =>
        sql`UPDATE integration_api_keys SET api_key_id = ${keyId}, key_value = ${sealed}, created_at = now()
            WHERE integration_id = ${integrationId} AND api_key_id = ${previousKeyId} RETURNING integration_id`
    })
    const insertKey = SqlSchema.findOne({
      Request: Schema.Struct({ integrationId: Schema.String, keyId: Schema.String, sealed: Schema.String }),
      Result: IdRow,
      execute: ({ integrationId, keyId, sealed }) =>
        sql`INSERT INTO integration_api_keys (integration_id, api_key_id, key_value) VALUES (${integrationId}, ${keyId}, ${sealed})
            ON CONFLICT (integration_id) DO NOTHING RETURNING integration_id`
    })
    return repository("IntegrationsRepo", {
      /** The integration's stored settings, key to stored value. */
      settings: (integrationId: string) => Effect.map(settings(integrationId), (rows) => new Map(rows.map((row) => [row.key, row.value]))),
      /** Writes and forgets (null) settings in one transaction. */
      writeSettings: (integrationId: string, writes: ReadonlyArray<readonly [string, string | null]>) =>
        sql.withTransaction(
          Effect.forEach(
            writes,
            ([key, value]) =>
              value === null
                ? sql`DELETE FROM integration_settings WHERE integration_id = ${integrationId} AND key = ${key}`
                : sql`INSERT INTO integration_settings (integration_id, key, value, updated_at)
                      VALUES (${integrationId}, ${key}, ${value}, now())
                      ON CONFLICT (integration_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
            { discard: true }
          )
        ),
      processKey: (integrationId: string) => processKey(integrationId),
      /**
       * Records the process's new key (sealed). With `previousKeyId`, replaces only that row; false
       * when another process replaced or created it meanwhile.
       */
      saveProcessKey: (integrationId: string, keyId: string, sealed: string, previousKeyId: string | undefined) =>
        Effect.map(
          previousKeyId === undefined
            ? insertKey({ integrationId, keyId, sealed })
            : replaceKey({ integrationId, previousKeyId, keyId, sealed }),
          Option.isSome
        )
    })
  })
}) {}
