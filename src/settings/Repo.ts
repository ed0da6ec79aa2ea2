/** SQL for the settings table. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, repository } from "../db/Repository.ts"

/** A stored value is checked against its setting's schema by the service, not here. */
const SettingRow = Schema.Struct({ key: Schema.String, value: Schema.Unknown })

export class SettingsRepo extends Effect.Service<SettingsRepo>()("cairn/SettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return repository("SettingsRepo", {
      all: sql`SELECT key, value FROM settings`.pipe(decodeRows(SettingRow)),
      upsertMany: (values: ReadonlyArray<readonly [string, unknown]>) =>
        sql.withTransaction(
          Effect.forEach(
            values,
            ([key, value]) =>
              sql`INSERT INTO settings (key, value, updated_at) VALUES (${key}, ${JSON.stringify(value)}::jsonb, now())
                  ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
            { discard: true }
          )
        ),
      remove: (key: string) => sql`DELETE FROM settings WHERE key = ${key}`.pipe(Effect.asVoid)
    })
  })
}) {}
