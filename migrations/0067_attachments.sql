-- Uploaded files. The bytes live in the database, not on a process's disk: every server process
-- behind a load balancer reaches them, they share the database's durability, and a backup of the
-- database holds them. `type` is what the bytes were sniffed as, never the client's claim.
CREATE TABLE IF NOT EXISTS attachments (
  id uuid PRIMARY KEY,
  owner text NOT NULL,
  name text NOT NULL,
  type text NOT NULL,
  size_bytes int NOT NULL,
  sha256 text NOT NULL,
  session_id uuid,
  data bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS attachments_owner_created ON attachments (owner, created_at DESC);
CREATE INDEX IF NOT EXISTS attachments_session ON attachments (session_id);
