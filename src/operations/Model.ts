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

/** What a repository pull brought in, by kind: the ids synced from the pulled files. */
export const RepositorySynced = Schema.Struct({
  bots: Schema.Array(Schema.String),
  skills: Schema.Array(Schema.String),
  workflows: Schema.Array(Schema.String)
}).annotations({ identifier: "RepositorySynced" })
export type RepositorySynced = typeof RepositorySynced.Type

/** One pull of the configured repository (REPO_DIR), as audited. */
export class RepositoryPull extends Schema.Class<RepositoryPull>("RepositoryPull")({
  id: Schema.UUID,
  /** updated (new commits, files synced), current (nothing new) or failed (`error` says why). */
  status: Schema.Literal("updated", "current", "failed"),
  /** Who asked: `kind:id` of the credential (a key, a user). */
  requested_by: Schema.String,
  before_commit: Schema.NullOr(Schema.String),
  after_commit: Schema.NullOr(Schema.String),
  /** Paths the pull changed, relative to the repository. */
  changed_files: Schema.Array(Schema.String),
  synced: RepositorySynced,
  error: Schema.NullOr(Schema.String),
  pulled_at: TimestampText
}) {}

/** The configured repository as it is now, with its last pulls. */
export class RepositoryStatus extends Schema.Class<RepositoryStatus>("RepositoryStatus")({
  dir: Schema.String,
  branch: Schema.NullOr(Schema.String),
  head: Schema.NullOr(Schema.String),
  /** The branch's upstream (`origin/main`), credentials in its URL masked. */
  upstream: Schema.NullOr(Schema.String),
  pulls: Schema.Array(RepositoryPull)
}) {}

export const RepositoryPullsQuery = queryParams({
  limit: limitParam()
})
