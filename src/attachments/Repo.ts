/** SQL for attachments: metadata and bytes in one row, the bytes read only when served. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { Attachment } from "./Model.ts"

/** An attachment as stored: the API's `Attachment` as the driver hands it over (its type side: timestamps as `Date`) with its owner; the url is the service's. */
export const AttachmentRow = Schema.Struct(Attachment.fields).pipe(
  Schema.omit("url"),
  Schema.typeSchema,
  Schema.extend(Schema.Struct({ owner: Schema.String }))
)
export type AttachmentRow = typeof AttachmentRow.Type

const DataRow = Schema.Struct({ data: Schema.Uint8ArrayFromSelf })

const columns = "id, owner, name, type, size_bytes, sha256, session_id, created_at"

export interface NewAttachment {
  readonly id: string
  readonly owner: string
  readonly name: string
  readonly type: string
  readonly sha256: string
  readonly sessionId: string | null
  readonly data: Uint8Array
}

export interface AttachmentFilter {
  /** Only this owner's; undefined: every owner's. */
  readonly owner?: string | undefined
  readonly type?: string | undefined
  readonly sessionId?: string | undefined
  readonly limit: number
}

export class AttachmentsRepo extends Effect.Service<AttachmentsRepo>()("cairn/AttachmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(AttachmentRow)
    const data = decodeRows(DataRow)
    return repository("AttachmentsRepo", {
      insert: (file: NewAttachment) =>
        rows(sql`INSERT INTO attachments (id, owner, name, type, size_bytes, sha256, session_id, data)
                 VALUES (${file.id}, ${file.owner}, ${file.name}, ${file.type}, ${file.data.length}, ${file.sha256}, ${file.sessionId}, ${
          Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength)
        })
                 RETURNING ${sql.literal(columns)}`).pipe(Effect.map((list) => list[0]!)),
      /** Newest first. A type ending in `/*` matches its family. */
      list: (filter: AttachmentFilter) => {
        const family = filter.type?.endsWith("/*") ? filter.type.slice(0, -1) : null
        const exact = filter.type !== undefined && family === null ? filter.type : null
        return rows(sql`SELECT ${sql.literal(columns)} FROM attachments
                        WHERE (${filter.owner ?? null}::text IS NULL OR owner = ${filter.owner ?? null})
                          AND (${exact}::text IS NULL OR type = ${exact})
                          AND (${family}::text IS NULL OR starts_with(type, ${family}))
                          AND (${filter.sessionId ?? null}::uuid IS NULL OR session_id = ${filter.sessionId ?? null}::uuid)
                        ORDER BY created_at DESC, id LIMIT ${filter.limit}`)
      },
      find: (id: string) => rows(sql`SELECT ${sql.literal(columns)} FROM attachments WHERE id = ${id}`).pipe(Effect.map(firstRow)),
      bytes: (id: string) => data(sql`SELECT data FROM attachments WHERE id = ${id}`).pipe(Effect.map((list) => list[0]?.data)),
      remove: (id: string) => Effect.map(sql`DELETE FROM attachments WHERE id = ${id} RETURNING id`, (deleted) => deleted.length === 1)
    })
  })
}) {}
