/** SQL for one-time links: invitations and password resets, kept by their token's hash. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../../db/Repository.ts"
import { Role } from "./Model.ts"

export const InvitationRow = Schema.Struct({
  id: Schema.String,
  display_prefix: Schema.String,
  role: Role,
  username_hint: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  username: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  used_at: Schema.NullOr(Schema.DateFromSelf)
})
export type InvitationRow = typeof InvitationRow.Type

const columns = `i.id::text AS id, i.display_prefix, i.role, i.username_hint, i.user_id::text AS user_id, u.username,
  i.created_at, i.expires_at, i.used_at`
const iso = (date: Date) => date.toISOString()

export class InvitationsRepo extends Effect.Service<InvitationsRepo>()("cairn/InvitationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    const rows = decodeRows(InvitationRow)
    return repository("InvitationsRepo", {
      insert: (row: {
        readonly id: string
        readonly hash: string
        readonly prefix: string
        readonly role: Role
        readonly usernameHint: string | null
        readonly userId: string | null
        readonly createdBy: string | null
        readonly expiresAt: Date
      }) =>
        sql`INSERT INTO invitations (id, token_hash, display_prefix, role, username_hint, user_id, created_by, expires_at)
          VALUES (${row.id}::uuid, ${row.hash}, ${row.prefix}, ${row.role}, ${row.usernameHint}, ${row.userId}::uuid,
                  ${row.createdBy}::uuid, ${iso(row.expiresAt)}::timestamptz)`.pipe(Effect.asVoid),
      byId: (id: string) =>
        sql`SELECT ${cols} FROM invitations i LEFT JOIN users u ON u.id = i.user_id WHERE i.id = ${id}::uuid`.pipe(
          rows,
          Effect.map(firstRow)
        ),
      list: sql`SELECT ${cols} FROM invitations i LEFT JOIN users u ON u.id = i.user_id ORDER BY i.created_at DESC, i.id`.pipe(rows),
      byHash: (hash: string) =>
        sql`SELECT ${cols} FROM invitations i LEFT JOIN users u ON u.id = i.user_id WHERE i.token_hash = ${hash}`.pipe(
          rows,
          Effect.map(firstRow)
        ),
      /** Spends an unspent, unexpired link: the row when this call spent it, none when it was not there to spend. */
      spend: (hash: string, now: Date) =>
        sql`UPDATE invitations i SET used_at = ${iso(now)}::timestamptz
          FROM invitations j LEFT JOIN users u ON u.id = j.user_id
          WHERE i.token_hash = ${hash} AND j.id = i.id AND i.used_at IS NULL AND i.expires_at > ${iso(now)}::timestamptz
          RETURNING ${cols}`.pipe(rows, Effect.map(firstRow)),
      usedBy: (id: string, userId: string) =>
        sql`UPDATE invitations SET used_by = ${userId}::uuid WHERE id = ${id}::uuid`.pipe(Effect.asVoid),
      remove: (id: string) =>
        sql`DELETE FROM invitations WHERE id = ${id}::uuid RETURNING id::text AS id`.pipe(Effect.map((r) => r.length > 0))
    })
  })
}) {}
