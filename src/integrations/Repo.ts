/**
 * SQL for integration settings (values as stored: secrets already sealed by the service) and for
 * the API key each integration's process calls back with. Rows are decoded with schemas; a
 * database failure is a defect here.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { decodeRows, firstRow, repository, transactions } from "../db/Repository.ts"

const AnySettingRow = Schema.Struct({ integration_id: Schema.String, key: Schema.String, value: Schema.String })
const ProcessKeyRow = Schema.Struct({ api_key_id: Schema.String, key_value: Schema.String })
const IdRow = Schema.Struct({ integration_id: Schema.String })

export class IntegrationsRepo extends Effect.Service<IntegrationsRepo>()("cairn/IntegrationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const processKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: ProcessKeyRow,
      execute: (integrationId) => sql`SELECT api_key_id, key_value FROM integration_api_keys WHERE integration_id = ${integrationId}`
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
    const allSettings = decodeRows(AnySettingRow)
    return repository("IntegrationsRepo", {
      /** Every integration's stored settings: integration to key to stored value. */
      allSettings: Effect.map(allSettings(sql`SELECT integration_id, key, value FROM integration_settings`), (rows) => {
        const byIntegration = new Map<string, Map<string, string>>()
        for (const row of rows) {
          const settings = byIntegration.get(row.integration_id) ?? new Map<string, string>()
          settings.set(row.key, row.value)
          byIntegration.set(row.integration_id, settings)
        }
        return byIntegration as ReadonlyMap<string, ReadonlyMap<string, string>>
      }),
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

const ValueRow = Schema.Struct({ value: Schema.String })
const KeyRow = Schema.Struct({ key: Schema.String })
/** bigint as text: the drivers differ on int8 (a string in pg, a bigint or number in PGlite). */
const ClockRow = Schema.Struct({ clock: Schema.NumberFromString })
const MemberRow = Schema.Struct({ member: Schema.String })

/** A live entry: no expiry, or one still ahead. */
const live = "(expires_at IS NULL OR expires_at > now())"

/**
 * SQL of each integration's persisted store: key-value entries (JSON text, optional expiry) and
 * bounded LRU sets. Every check-and-write is one atomic statement or runs under its set's row lock.
 */
export class IntegrationStoreRepo extends Effect.Service<IntegrationStoreRepo>()("cairn/IntegrationStoreRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = transactions(sql)
    const values = decodeRows(ValueRow)
    const keys = decodeRows(KeyRow)
    const members = decodeRows(MemberRow)
    const expiry = (ttlMs: number | undefined) => (ttlMs === undefined ? sql`NULL` : sql`now() + ${ttlMs} * interval '1 millisecond'`)

    return repository("IntegrationStoreRepo", {
      get: (integrationId: string, key: string) =>
        sql`SELECT value FROM integration_kv WHERE integration_id = ${integrationId} AND key = ${key} AND ${sql.literal(live)}`.pipe(
          values,
          Effect.map((rows) => firstRow(rows)?.value)
        ),
      set: (integrationId: string, key: string, value: string, ttlMs: number | undefined) =>
        Effect.asVoid(sql`INSERT INTO integration_kv (integration_id, key, value, expires_at, updated_at)
            VALUES (${integrationId}, ${key}, ${value}, ${expiry(ttlMs)}, now())
            ON CONFLICT (integration_id, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at, updated_at = now()`),
      remove: (integrationId: string, key: string) =>
        sql`DELETE FROM integration_kv WHERE integration_id = ${integrationId} AND key = ${key} AND ${sql.literal(live)} RETURNING key`
          .pipe(
            keys,
            Effect.map((rows) => rows.length > 0)
          ),
      /** Writes `next` only when the live value is `expected` (undefined: no live entry); whether it did. */
      compareAndSet: (integrationId: string, key: string, expected: string | undefined, next: string, ttlMs: number | undefined) =>
        (expected === undefined
          ? sql`INSERT INTO integration_kv (integration_id, key, value, expires_at, updated_at)
                VALUES (${integrationId}, ${key}, ${next}, ${expiry(ttlMs)}, now())
                ON CONFLICT (integration_id, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at, updated_at = now()
                WHERE integration_kv.expires_at IS NOT NULL AND integration_kv.expires_at <= now()
                RETURNING key`
          : sql`UPDATE integration_kv SET value = ${next}, expires_at = ${expiry(ttlMs)}, updated_at = now()
                WHERE integration_id = ${integrationId} AND key = ${key} AND value = ${expected} AND ${sql.literal(live)}
                RETURNING key`).pipe(
            keys,
            Effect.map((rows) => rows.length > 0)
          ),
      /** Keys of live entries starting with `prefix`, in order. */
      keys: (integrationId: string, prefix: string, limit: number) =>
        sql`SELECT key FROM integration_kv WHERE integration_id = ${integrationId} AND ${sql.literal(live)}
            AND left(key, ${prefix.length}) = ${prefix} ORDER BY key LIMIT ${limit}`.pipe(
          keys,
          Effect.map((rows) => rows.map((row) => row.key))
        ),
      /** Deletes expired entries of every integration; how many. */
      sweepExpired: sql`DELETE FROM integration_kv WHERE expires_at <= now() RETURNING key`.pipe(
        keys,
        Effect.map((rows) => rows.length)
      ),
      /**
       * Offers `member` to a set of `capacity`: true when it was not there (it is now, and the least
       * recently used beyond the capacity are evicted); false when it was (it becomes the most
       * recently used). The set's header row is locked first, so two processes offering the same
       * member are serialised and exactly one is admitted.
       */
      lruAdd: (integrationId: string, name: string, member: string, capacity: number) =>
        transaction(
          Effect.gen(function*() {
            const [header] = yield* sql`INSERT INTO integration_lru_sets (integration_id, name, clock) VALUES (${integrationId}, ${name}, 1)
                ON CONFLICT (integration_id, name) DO UPDATE SET clock = integration_lru_sets.clock + 1 RETURNING clock::text AS clock`
              .pipe(decodeRows(ClockRow))
            const clock = header!.clock
            const inserted = yield* sql`INSERT INTO integration_lru_members (integration_id, name, member, used)
                VALUES (${integrationId}, ${name}, ${member}, ${clock}) ON CONFLICT DO NOTHING RETURNING member`.pipe(members)
            if (inserted.length === 0) {
              yield* sql`UPDATE integration_lru_members SET used = ${clock}
                  WHERE integration_id = ${integrationId} AND name = ${name} AND member = ${member}`
              return false
            }
            yield* sql`DELETE FROM integration_lru_members WHERE integration_id = ${integrationId} AND name = ${name}
                AND used <= (SELECT used FROM integration_lru_members WHERE integration_id = ${integrationId} AND name = ${name}
                             ORDER BY used DESC OFFSET ${capacity} LIMIT 1)`
            return true
          })
        ),
      lruHas: (integrationId: string, name: string, member: string) =>
        sql`SELECT member FROM integration_lru_members WHERE integration_id = ${integrationId} AND name = ${name} AND member = ${member}`
          .pipe(
            members,
            Effect.map((rows) => rows.length > 0)
          ),
      lruRemove: (integrationId: string, name: string, member: string) =>
        sql`DELETE FROM integration_lru_members WHERE integration_id = ${integrationId} AND name = ${name} AND member = ${member} RETURNING member`
          .pipe(
            members,
            Effect.map((rows) => rows.length > 0)
          ),
      /** Members, most recently used first. */
      lruMembers: (integrationId: string, name: string, limit: number) =>
        sql`SELECT member FROM integration_lru_members WHERE integration_id = ${integrationId} AND name = ${name}
            ORDER BY used DESC LIMIT ${limit}`.pipe(
          members,
          Effect.map((rows) => rows.map((row) => row.member))
        )
    })
  })
}) {}
