-- Backups made by POST /api/v1/admin/operations/backup or the BACKUP_INTERVAL_HOURS schedule. At
-- most one runs at a time across every server process (the partial unique index is the lock).
-- `expired`: removed by BACKUP_RETENTION; the row stays as history.
CREATE TABLE IF NOT EXISTS backups (
  id uuid PRIMARY KEY,
  status text NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'expired')),
  trigger text NOT NULL CHECK (trigger IN ('manual', 'scheduled')),
  file_name text NOT NULL,
  size_bytes bigint,
  tables_total int NOT NULL DEFAULT 0,
  tables_done int NOT NULL DEFAULT 0,
  rows_written bigint NOT NULL DEFAULT 0,
  files_written int NOT NULL DEFAULT 0,
  schema_version int,
  error text,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS backups_one_running ON backups ((true)) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS backups_started ON backups (started_at DESC);
