/** SQL for users, refresh tokens and pending OpenID logins. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CountRow, decodeRows, firstRow, repository } from "../../db/Repository.ts"
import { Role } from "./Model.ts"

export const UserRow = Schema.Struct({
  id: Schema.String,
  username: Schema.String,
  email: Schema.NullOr(Schema.String),
  display_name: Schema.NullOr(Schema.String),
  password_hash: Schema.NullOr(Schema.String),
  role: Role,
  oidc_issuer: Schema.NullOr(Schema.String),
  oidc_subject: Schema.NullOr(Schema.String),
  disabled_at: Schema.NullOr(Schema.DateFromSelf),
  last_login_at: Schema.NullOr(Schema.DateFromSelf),
  tokens_valid_after: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
export type UserRow = typeof UserRow.Type

export const RefreshRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  family_id: Schema.String,
  expires_at: Schema.DateFromSelf,
  rotated_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})
export type RefreshRow = typeof RefreshRow.Type

export const OidcLoginRow = Schema.Struct({
  state: Schema.String,
  code_verifier: Schema.String,
  nonce: Schema.String,
  expires_at: Schema.DateFromSelf
})
export type OidcLoginRow = typeof OidcLoginRow.Type

const userColumns =
  "id::text AS id, username, email, display_name, password_hash, role, oidc_issuer, oidc_subject, disabled_at, last_login_at, tokens_valid_after, created_at"
const iso = (date: Date) => date.toISOString()

/** A user's row changed: `disabled` sets or clears `disabled_at`, `endTokens` refuses access tokens issued before `at`. */
export interface UserChanges {
  readonly at: Date
  readonly role?: Role
  readonly passwordHash?: string
  readonly disabled?: boolean
  readonly endTokens?: boolean
}

export class UsersRepo extends Effect.Service<UsersRepo>()("cairn/UsersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(userColumns)
    const userRows = decodeRows(UserRow)
    const oneUser = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) => Effect.map(userRows(query), firstRow)
    return repository("UsersRepo", {
      count: sql`SELECT count(*)::int AS n FROM users`.pipe(decodeRows(CountRow), Effect.map((rows) => rows[0]?.n ?? 0)),
      list: userRows(sql`SELECT ${cols} FROM users ORDER BY created_at, username`),
      byId: (id: string) => oneUser(sql`SELECT ${cols} FROM users WHERE id = ${id}::uuid`),
      byIdForUpdate: (id: string) => oneUser(sql`SELECT ${cols} FROM users WHERE id = ${id}::uuid FOR UPDATE`),
      byUsername: (username: string) => oneUser(sql`SELECT ${cols} FROM users WHERE lower(username) = lower(${username})`),
      byOidc: (issuer: string, subject: string) =>
        oneUser(sql`SELECT ${cols} FROM users WHERE oidc_issuer = ${issuer} AND oidc_subject = ${subject}`),
      byVerifiedEmail: (email: string) =>
        oneUser(sql`SELECT ${cols} FROM users WHERE lower(email) = lower(${email}) AND oidc_subject IS NULL`),
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
        sql`INSERT INTO users (id, username, email, display_name, password_hash, role, oidc_issuer, oidc_subject)
          VALUES (${user.id}::uuid, ${user.username}, ${user.email}, ${user.displayName}, ${user.passwordHash},
                  ${user.role}, ${user.oidcIssuer}, ${user.oidcSubject})
          RETURNING ${cols}`.pipe(userRows, Effect.map((rows) => rows[0]!)),
      linkOidc: (id: string, issuer: string, subject: string) =>
        sql`UPDATE users SET oidc_issuer = ${issuer}, oidc_subject = ${subject} WHERE id = ${id}::uuid
          RETURNING ${cols}`.pipe(userRows, Effect.map((rows) => rows[0]!)),
      update: (id: string, changes: UserChanges) =>
        oneUser(sql`UPDATE users SET role = COALESCE(${changes.role ?? null}, role),
            password_hash = COALESCE(${changes.passwordHash ?? null}, password_hash),
            disabled_at = CASE WHEN ${changes.disabled === undefined}::boolean THEN disabled_at
              WHEN ${changes.disabled === true}::boolean THEN COALESCE(disabled_at, ${iso(changes.at)}::timestamptz) ELSE NULL END,
            tokens_valid_after = CASE WHEN ${changes.endTokens === true}::boolean
              THEN ${iso(changes.at)}::timestamptz ELSE tokens_valid_after END
          WHERE id = ${id}::uuid RETURNING ${cols}`),
      signedIn: (id: string, at: Date) =>
        sql`UPDATE users SET last_login_at = ${iso(at)}::timestamptz WHERE id = ${id}::uuid`.pipe(Effect.asVoid),
      remove: (id: string) => sql`DELETE FROM users WHERE id = ${id}::uuid RETURNING id::text AS id`,
      /**
       * Revokes the API keys the user made. Run before `remove`: the row's delete leaves a key
       * ownerless (migrations/84), and an ownerless key no longer asks the user gate.
       */
      revokeKeysOf: (userId: string, at: Date) =>
        sql`UPDATE api_keys SET revoked_at = ${iso(at)}::timestamptz
          WHERE owner_user_id = ${userId}::uuid AND revoked_at IS NULL`.pipe(Effect.asVoid),

      insertRefresh: (
        row: { readonly id: string; readonly userId: string; readonly familyId: string; readonly hash: string; readonly expiresAt: Date }
      ) =>
        sql`INSERT INTO refresh_tokens (id, user_id, family_id, token_hash, expires_at)
          VALUES (${row.id}::uuid, ${row.userId}::uuid, ${row.familyId}::uuid, ${row.hash}, ${iso(row.expiresAt)}::timestamptz)`.pipe(
          Effect.asVoid
        ),
      refreshForUpdate: (hash: string) =>
        sql`SELECT id::text AS id, user_id::text AS user_id, family_id::text AS family_id, expires_at, rotated_at, revoked_at
          FROM refresh_tokens WHERE token_hash = ${hash} FOR UPDATE`.pipe(decodeRows(RefreshRow), Effect.map(firstRow)),
      markRotated: (id: string, at: Date) =>
        sql`UPDATE refresh_tokens SET rotated_at = ${iso(at)}::timestamptz WHERE id = ${id}::uuid`.pipe(Effect.asVoid),
      revokeFamily: (familyId: string, at: Date) =>
        sql`UPDATE refresh_tokens SET revoked_at = ${iso(at)}::timestamptz
          WHERE family_id = ${familyId}::uuid AND revoked_at IS NULL`.pipe(Effect.asVoid),
      revokeUser: (userId: string, at: Date) =>
        sql`UPDATE refresh_tokens SET revoked_at = ${iso(at)}::timestamptz
          WHERE user_id = ${userId}::uuid AND revoked_at IS NULL`.pipe(Effect.asVoid),
      /** Ends every session of the user but the sign-in `keepFamily` (a password changed from it). */
      revokeUserExcept: (userId: string, keepFamily: string | null, at: Date) =>
        sql`UPDATE refresh_tokens SET revoked_at = ${iso(at)}::timestamptz
          WHERE user_id = ${userId}::uuid AND revoked_at IS NULL
            AND (${keepFamily}::uuid IS NULL OR family_id <> ${keepFamily}::uuid)`.pipe(Effect.asVoid),

      insertOidcLogin: (row: OidcLoginRow) =>
        sql`INSERT INTO oidc_logins (state, code_verifier, nonce, expires_at)
          VALUES (${row.state}, ${row.code_verifier}, ${row.nonce}, ${iso(row.expires_at)}::timestamptz)`.pipe(Effect.asVoid),
      /** Single use: the row is gone once read. Expired rows are cleared on the way. */
      takeOidcLogin: (state: string, now: Date) =>
        Effect.zipLeft(
          sql`DELETE FROM oidc_logins WHERE state = ${state}
            RETURNING state, code_verifier, nonce, expires_at`.pipe(decodeRows(OidcLoginRow), Effect.map(firstRow)),
          sql`DELETE FROM oidc_logins WHERE expires_at < ${iso(now)}::timestamptz`
        )
    })
  })
}) {}
