/** SQL for users, refresh tokens and pending OpenID logins. */
import { repository } from "../../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Role } from "./Model.ts"

export interface UserRow {
  readonly id: string
  readonly username: string
  readonly email: string | null
  readonly display_name: string | null
  readonly password_hash: string | null
  readonly role: Role
  readonly oidc_issuer: string | null
  readonly oidc_subject: string | null
  readonly created_at: Date
}

export interface RefreshRow {
  readonly id: string
  readonly user_id: string
  readonly family_id: string
  readonly expires_at: Date
  readonly rotated_at: Date | null
  readonly revoked_at: Date | null
}

export interface OidcLoginRow {
  readonly state: string
  readonly code_verifier: string
  readonly nonce: string
  readonly expires_at: Date
}

const userColumns =
  "id::text AS id, username, email, display_name, password_hash, role, oidc_issuer, oidc_subject, created_at"
const iso = (date: Date) => date.toISOString()

export class UsersRepo extends Effect.Service<UsersRepo>()("cairn/UsersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(userColumns)
    const first = <A>(rows: ReadonlyArray<A>) => rows[0]
    return repository("UsersRepo", {
      count: sql<{ n: number }>`SELECT count(*)::int AS n FROM users`.pipe(Effect.map((rows) => rows[0]?.n ?? 0)),
      list: sql<UserRow>`SELECT ${cols} FROM users ORDER BY created_at, username`,
      byId: (id: string) => sql<UserRow>`SELECT ${cols} FROM users WHERE id = ${id}::uuid`.pipe(Effect.map(first)),
      byIdForUpdate: (id: string) =>
        sql<UserRow>`SELECT ${cols} FROM users WHERE id = ${id}::uuid FOR UPDATE`.pipe(Effect.map(first)),
      byUsername: (username: string) =>
        sql<UserRow>`SELECT ${cols} FROM users WHERE lower(username) = lower(${username})`.pipe(Effect.map(first)),
      byOidc: (issuer: string, subject: string) =>
        sql<UserRow>`SELECT ${cols} FROM users WHERE oidc_issuer = ${issuer} AND oidc_subject = ${subject}`.pipe(
          Effect.map(first)
        ),
      byVerifiedEmail: (email: string) =>
        sql<UserRow>`SELECT ${cols} FROM users WHERE lower(email) = lower(${email}) AND oidc_subject IS NULL`.pipe(
          Effect.map(first)
        ),
      /** Serialises user creation so "first user" decisions cannot race across processes. */
      lockUsers: sql`SELECT pg_advisory_xact_lock(7310001)`.pipe(Effect.asVoid),
      insert: (user: {
        readonly id: string
        readonly username: string
        readonly email: string | null
        readonly displayName: string | null
        readonly passwordHash: string | null
        readonly role: Role
        readonly oidcIssuer: string | null
        readonly oidcSubject: string | null
      }) =>
        sql<UserRow>`INSERT INTO users (id, username, email, display_name, password_hash, role, oidc_issuer, oidc_subject)
          VALUES (${user.id}::uuid, ${user.username}, ${user.email}, ${user.displayName}, ${user.passwordHash},
                  ${user.role}, ${user.oidcIssuer}, ${user.oidcSubject})
          RETURNING ${cols}`.pipe(Effect.map((rows) => rows[0]!)),
      linkOidc: (id: string, issuer: string, subject: string) =>
        sql<UserRow>`UPDATE users SET oidc_issuer = ${issuer}, oidc_subject = ${subject} WHERE id = ${id}::uuid
          RETURNING ${cols}`.pipe(Effect.map((rows) => rows[0]!)),
      update: (id: string, changes: { readonly role?: Role; readonly passwordHash?: string }) =>
        sql<UserRow>`UPDATE users SET role = COALESCE(${changes.role ?? null}, role),
            password_hash = COALESCE(${changes.passwordHash ?? null}, password_hash)
          WHERE id = ${id}::uuid RETURNING ${cols}`.pipe(Effect.map(first)),
      remove: (id: string) => sql<{ id: string }>`DELETE FROM users WHERE id = ${id}::uuid RETURNING id::text AS id`,

      insertRefresh: (row: { readonly id: string; readonly userId: string; readonly familyId: string; readonly hash: string; readonly expiresAt: Date }) =>
        sql`INSERT INTO refresh_tokens (id, user_id, family_id, token_hash, expires_at)
          VALUES (${row.id}::uuid, ${row.userId}::uuid, ${row.familyId}::uuid, ${row.hash}, ${iso(row.expiresAt)}::timestamptz)`.pipe(
          Effect.asVoid
        ),
      refreshForUpdate: (hash: string) =>
        sql<RefreshRow>`SELECT id::text AS id, user_id::text AS user_id, family_id::text AS family_id, expires_at, rotated_at, revoked_at
          FROM refresh_tokens WHERE token_hash = ${hash} FOR UPDATE`.pipe(Effect.map(first)),
      markRotated: (id: string, at: Date) =>
        sql`UPDATE refresh_tokens SET rotated_at = ${iso(at)}::timestamptz WHERE id = ${id}::uuid`.pipe(Effect.asVoid),
      revokeFamily: (familyId: string, at: Date) =>
        sql`UPDATE refresh_tokens SET revoked_at = ${iso(at)}::timestamptz
          WHERE family_id = ${familyId}::uuid AND revoked_at IS NULL`.pipe(Effect.asVoid),

      insertOidcLogin: (row: OidcLoginRow) =>
        sql`INSERT INTO oidc_logins (state, code_verifier, nonce, expires_at)
          VALUES (${row.state}, ${row.code_verifier}, ${row.nonce}, ${iso(row.expires_at)}::timestamptz)`.pipe(Effect.asVoid),
      /** Single use: the row is gone once read. Expired rows are cleared on the way. */
      takeOidcLogin: (state: string, now: Date) =>
        Effect.zipLeft(
          sql<OidcLoginRow>`DELETE FROM oidc_logins WHERE state = ${state}
            RETURNING state, code_verifier, nonce, expires_at`.pipe(Effect.map(first)),
          sql`DELETE FROM oidc_logins WHERE expires_at < ${iso(now)}::timestamptz`
        )
    })
  })
}) {}
