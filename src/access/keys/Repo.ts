/** SQL for scoped API keys. */
import { decodeRows, repository } from "../../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/** As stored; `scopes` is narrowed to strings by `normalise`, so a bad row grants nothing. */
const StoredApiKeyRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key_hash: Schema.String,
  display_prefix: Schema.String,
  scopes: Schema.Unknown,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  last_used_at: Schema.NullOr(Schema.DateFromSelf)
})

export interface ApiKeyRow extends Omit<typeof StoredApiKeyRow.Type, "scopes"> {
  readonly scopes: ReadonlyArray<string>
}

const columns = "id::text AS id, name, key_hash, display_prefix, scopes, created_at, expires_at, revoked_at, last_used_at"

/** jsonb arrives parsed from both drivers; guard anyway so a bad row never grants anything. */
const normalise = (row: typeof StoredApiKeyRow.Type): ApiKeyRow => ({
  ...row,
  scopes: Array.isArray(row.scopes) ? row.scopes.filter((s): s is string => typeof s === "string") : []
})

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("cairn/ApiKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keyRows = decodeRows(StoredApiKeyRow)
    const first = (rows: ReadonlyArray<typeof StoredApiKeyRow.Type>) => (rows[0] ? normalise(rows[0]) : undefined)
    return repository("ApiKeysRepo", {
      insert: (key: {
        readonly id: string
        readonly name: string
        readonly keyHash: string
        readonly prefix: string
        readonly scopes: ReadonlyArray<string>
        readonly expiresAt: Date | null
      }) =>
        sql`INSERT INTO api_keys (id, name, key_hash, display_prefix, scopes, expires_at)
          VALUES (${key.id}::uuid, ${key.name}, ${key.keyHash}, ${key.prefix}, ${JSON.stringify(key.scopes)}::jsonb, ${key.expiresAt?.toISOString() ?? null}::timestamptz)
          RETURNING ${sql.literal(columns)}`.pipe(keyRows, Effect.map((rows) => first(rows)!)),
      list: sql`SELECT ${sql.literal(columns)} FROM api_keys ORDER BY created_at, id`.pipe(
        keyRows,
        Effect.map((rows) => rows.map(normalise))
      ),
      byId: (id: string) =>
        sql`SELECT ${sql.literal(columns)} FROM api_keys WHERE id = ${id}::uuid`.pipe(keyRows, Effect.map(first)),
      byHash: (hash: string) =>
        sql`SELECT ${sql.literal(columns)} FROM api_keys WHERE key_hash = ${hash}`.pipe(keyRows, Effect.map(first)),
      update: (id: string, changes: { readonly name?: string; readonly scopes?: ReadonlyArray<string> }) =>
        sql`UPDATE api_keys SET
            name = COALESCE(${changes.name ?? null}, name),
            scopes = COALESCE(${changes.scopes ? JSON.stringify(changes.scopes) : null}::jsonb, scopes)
          WHERE id = ${id}::uuid
          RETURNING ${sql.literal(columns)}`.pipe(keyRows, Effect.map(first)),
      revoke: (id: string) =>
        sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
          WHERE id = ${id}::uuid RETURNING ${sql.literal(columns)}`.pipe(keyRows, Effect.map(first)),
      touch: (id: string, at: Date) =>
        sql`UPDATE api_keys SET last_used_at = ${at.toISOString()}::timestamptz
          WHERE id = ${id}::uuid AND (last_used_at IS NULL OR last_used_at < ${at.toISOString()}::timestamptz)`.pipe(
          Effect.asVoid
        )
    })
  })
}) {}
