-- Each pull of the configured repository (REPO_DIR: a git working copy of bots, skills and
-- workflows), kept as its audit: who asked, from which commit to which, what changed and what was
-- synced, or why it failed. Never updated; read newest first.
CREATE TABLE IF NOT EXISTS repository_pulls (
  id uuid PRIMARY KEY,
  status text NOT NULL CHECK (status IN ('updated', 'current', 'failed')),
  requested_by text NOT NULL,
  before_commit text,
  after_commit text,
  changed_files jsonb NOT NULL DEFAULT '[]'::jsonb,
  synced jsonb NOT NULL DEFAULT '{"bots": [], "skills": [], "workflows": []}'::jsonb,
  error text,
  pulled_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS repository_pulls_pulled_at ON repository_pulls (pulled_at DESC);
