/** What the operations routes answer: backups with their progress, and a restart's acknowledgement. */
import { Schema } from "effect"
import { limitParam, queryParams } from "../contract/Params.ts"
import { TimestampText } from "../contract/Time.ts"

export const BackupStatus = Schema.Literal("running", "complete", "failed", "expired")

export class Backup extends Schema.Class<Backup>("Backup")({
  id: Schema.UUID,
  status: BackupStatus,
  /** manual (POST …/backup) or scheduled (BACKUP_INTERVAL_HOURS). */
  trigger: Schema.Literal("manual", "scheduled"),
  file_name: Schema.String,
  size_bytes: Schema.NullOr(Schema.Number),
  /** Progress: tables dumped of all, rows written so far, files copied. */
  tables_done: Schema.Number,
  tables_total: Schema.Number,
  rows_written: Schema.Number,
  files_written: Schema.Number,
  /** The schema (newest migration) the database had: a restore replays up to it, then the rest. */
  schema_version: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  started_at: TimestampText,
  finished_at: Schema.NullOr(TimestampText),
  /** Where the archive is served while it is kept. */
  download_url: Schema.NullOr(Schema.String)
}) {}

export const BackupHistoryQuery = queryParams({
  limit: limitParam()
})

export class RestartAccepted extends Schema.Class<RestartAccepted>("RestartAccepted")({
  restarting: Schema.Literal(true),
  /** What restarts the process: systemd, pm2, or configured (SUPERVISED=true). */
  supervisor: Schema.String
}) {}
