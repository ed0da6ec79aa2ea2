/** SQL for the backup history. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { Backup } from "./Model.ts"

const Count = Schema.Union(Schema.Number, Schema.NumberFromString)

/**
 * A backup as stored: the API's `Backup` as the driver hands it over (its type side: timestamps as
 * `Date`), its bigint counts as node-postgres reads them (text); the download url is the service's.
 */
export const BackupRow = Schema.Struct(Backup.fields).pipe(
  Schema.omit("download_url", "size_bytes", "rows_written"),
  Schema.typeSchema,
  Schema.extend(Schema.Struct({ size_bytes: Schema.NullOr(Count), rows_written: Count }))
)
export type BackupRow = typeof BackupRow.Type

/** `max(started_at)`: null before the first backup. */
const LastStartedRow = Schema.Struct({ at: Schema.NullOr(Schema.DateFromSelf) })

const columns =
  "id, status, trigger, file_name, size_bytes, tables_total, tables_done, rows_written, files_written, schema_version, error, started_at, finished_at"

export class BackupsRepo extends Effect.Service<BackupsRepo>()("cairn/BackupsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(BackupRow)
    return repository("BackupsRepo", {
      /** A running backup, unless one runs already (anywhere): then undefined. */
      begin: (id: string, trigger: "manual" | "scheduled", fileName: string) =>
        rows(sql`INSERT INTO backups (id, status, trigger, file_name) VALUES (${id}, 'running', ${trigger}, ${fileName})
                 ON CONFLICT DO NOTHING RETURNING ${sql.literal(columns)}`).pipe(Effect.map(firstRow)),
      complete: (
        id: string,
        result: {
          readonly sizeBytes: number
          readonly files: number
          readonly schemaVersion: number
          readonly tables: number
          readonly rows: number
        }
      ) =>
        sql`UPDATE backups SET status = 'complete', size_bytes = ${result.sizeBytes}, files_written = ${result.files},
                   tables_done = ${result.tables}, tables_total = ${result.tables}, rows_written = ${result.rows},
                   schema_version = ${result.schemaVersion}, finished_at = now() WHERE id = ${id}`.pipe(Effect.asVoid),
      fail: (id: string, error: string) =>
        sql`UPDATE backups SET status = 'failed', error = ${error}, finished_at = now() WHERE id = ${id}`.pipe(Effect.asVoid),
      /** Backups left running by a process that stopped (none runs longer than `olderThan`). */
      abandon: (olderThan: Date) =>
        sql`UPDATE backups SET status = 'failed', error = 'The process making it stopped before it finished', finished_at = now()
             WHERE status = 'running' AND started_at < ${olderThan}`.pipe(Effect.asVoid),
      /** Complete backups beyond the newest `keep`, marked expired; answers them (their archives are to delete). */
      expire: (keep: number) =>
        rows(sql`UPDATE backups SET status = 'expired' WHERE id IN (
                   SELECT id FROM backups WHERE status = 'complete' ORDER BY started_at DESC OFFSET ${keep})
                 RETURNING ${sql.literal(columns)}`),
      find: (id: string) => rows(sql`SELECT ${sql.literal(columns)} FROM backups WHERE id = ${id}`).pipe(Effect.map(firstRow)),
      history: (limit: number) => rows(sql`SELECT ${sql.literal(columns)} FROM backups ORDER BY started_at DESC, id LIMIT ${limit}`),
      /** When the newest backup started. */
      lastStarted: Effect.map(
        decodeRows(LastStartedRow)(sql`SELECT max(started_at) AS at FROM backups`),
        (found) => found[0]?.at ?? null
      )
    })
  })
}) {}
