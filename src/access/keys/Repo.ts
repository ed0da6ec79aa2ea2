/** SQL for scoped API keys. */
import { repository } from "../../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface ApiKeyRow {
  readonly id: string
  readonly name: string
  readonly key_hash: string
  readonly display_prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: Date
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
  readonly last_used_at: Date | null
}

const columns = "id::text AS id, name, key_hash, display_prefix, scopes, created_at, expires_at, revoked_at, last_used_at"

/** jsonb arrives parsed from both drivers; guard anyway so a bad row never grants anything. */
const normalise = (row: ApiKeyRow): ApiKeyRow => ({
  ...row,
  scopes: Array.isArray(row.scopes) ? row.scopes.filter((s): s is string => typeof s === "string") : []
})

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("cairn/ApiKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = (rows: ReadonlyArray<ApiKeyRow>) => (rows[0] ? normalise(rows[0]) : undefined)
    return repository("ApiKeysRepo", {
      insert: (key: {
        readonly id: string
        readonly name: string
        readonly keyHash: string
        readonly prefix: string
        readonly scopes: ReadonlyArray<string>
        readonly expiresAt: Date | null
      }) =>
        sql<ApiKeyRow>`INSERT INTO api_keys (id, name, key_hash, display_prefix, scopes, expires_at)
          VALUES (${key.id}::uuid, ${key.name}, ${key.keyHash}, ${key.prefix}, ${JSON.stringify(key.scopes)}::jsonb, ${key.expiresAt?.toISOString() ?? null}::timestamptz)
          RETURNING ${sql.literal(columns)}`.pipe(Effect.map((rows) => first(rows)!)),
      list: sql<ApiKeyRow>`SELECT ${sql.literal(columns)} FROM api_keys ORDER BY created_at, id`.pipe(
        Effect.map((rows) => rows.map(normalise))
      ),
      byId: (id: string) =>
        sql<ApiKeyRow>`SELECT ${sql.literal(columns)} FROM api_keys WHERE id = ${id}::uuid`.pipe(Effect.map(first)),
      byHash: (hash: string) =>
        sql<ApiKeyRow>`SELECT ${sql.literal(columns)} FROM api_keys WHERE key_hash = ${hash}`.pipe(Effect.map(first)),
      update: (id: string, changes: { readonly name?: string; readonly scopes?: ReadonlyArray<string> }) =>
        sql<ApiKeyRow>`UPDATE api_keys SET
            name = COALESCE(${changes.name ?? null}, name),
            scopes = COALESCE(${changes.scopes ? JSON.stringify(changes.scopes) : null}::jsonb, scopes)
          WHERE id = ${id}::uuid
          RETURNING ${sql.literal(columns)}`.pipe(Effect.map(first)),
      revoke: (id: string) =>
        sql<ApiKeyRow>`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
          WHERE id = ${id}::uuid RETURNING ${sql.literal(columns)}`.pipe(Effect.map(first)),
      touch: (id: string, at: Date) =>
        sql`UPDATE api_keys SET last_used_at = ${at.toISOString()}::timestamptz
          WHERE id = ${id}::uuid AND (last_used_at IS NULL OR last_used_at < ${at.toISOString()}::timestamptz)`.pipe(
          Effect.asVoid
        )
    })
  })
}) {}
