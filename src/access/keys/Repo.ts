/** SQL for scoped API keys. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { HeldScopes, type Scope } from "../../auth/Scopes.ts"
import { decodeRows, firstRow, repository } from "../../db/Repository.ts"

/** As stored; `scopes` keeps the declared scope names only, so a bad entry grants nothing. */
const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key_hash: Schema.String,
  display_prefix: Schema.String,
  scopes: HeldScopes,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  owner_user_id: Schema.NullOr(Schema.String)
})

export type ApiKeyRow = typeof ApiKeyRow.Type

const columns =
  "id::text AS id, name, key_hash, display_prefix, scopes, created_at, expires_at, revoked_at, last_used_at, owner_user_id::text AS owner_user_id"

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("cairn/ApiKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keyRows = decodeRows(ApiKeyRow)
    return repository("ApiKeysRepo", {
      insert: (key: {
        readonly id: string
        readonly name: string
        readonly keyHash: string
        readonly prefix: string
        readonly scopes: ReadonlyArray<Scope>
        readonly expiresAt: Date | null
        readonly ownerUserId: string | null
      }) =>
        sql`INSERT INTO api_keys (id, name, key_hash, display_prefix, scopes, expires_at, owner_user_id)
          VALUES (${key.id}::uuid, ${key.name}, ${key.keyHash}, ${key.prefix}, ${JSON.stringify(key.scopes)}::jsonb, ${
          key.expiresAt?.toISOString() ?? null
        }::timestamptz, ${key.ownerUserId}::uuid)
          RETURNING ${sql.literal(columns)}`.pipe(keyRows, Effect.map((rows) => rows[0]!)),
      list: sql`SELECT ${sql.literal(columns)} FROM api_keys ORDER BY created_at, id`.pipe(keyRows),
      byId: (id: string) => sql`SELECT ${sql.literal(columns)} FROM api_keys WHERE id = ${id}::uuid`.pipe(keyRows, Effect.map(firstRow)),
      byHash: (hash: string) =>
        sql`SELECT ${sql.literal(columns)} FROM api_keys WHERE key_hash = ${hash}`.pipe(keyRows, Effect.map(firstRow)),
      update: (id: string, changes: { readonly name?: string; readonly scopes?: ReadonlyArray<Scope> }) =>
        sql`UPDATE api_keys SET
            name = COALESCE(${changes.name ?? null}, name),
            scopes = COALESCE(${changes.scopes ? JSON.stringify(changes.scopes) : null}::jsonb, scopes)
          WHERE id = ${id}::uuid
          RETURNING ${sql.literal(columns)}`.pipe(keyRows, Effect.map(firstRow)),
      revoke: (id: string) =>
        sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
          WHERE id = ${id}::uuid RETURNING ${sql.literal(columns)}`.pipe(keyRows, Effect.map(firstRow)),
      touch: (id: string, at: Date) =>
        sql`UPDATE api_keys SET last_used_at = ${at.toISOString()}::timestamptz
          WHERE id = ${id}::uuid AND (last_used_at IS NULL OR last_used_at < ${at.toISOString()}::timestamptz)`.pipe(
          Effect.asVoid
        )
    })
  })
}) {}
