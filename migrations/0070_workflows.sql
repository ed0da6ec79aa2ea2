-- Workflows: definitions (from files in workflows/ and WORKFLOWS_DIR, or the API) and their runs.
-- A run's steps run as tasks of the task queue; the engine (one leader across processes) moves a
-- step on only with a conditional update, so each step's work is done once.
CREATE TABLE IF NOT EXISTS workflows (
  id text PRIMARY KEY,
  definition jsonb NOT NULL,
  source text NOT NULL CHECK (source IN ('file', 'api')),
  origin text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS workflow_runs (
  id uuid PRIMARY KEY,
  workflow_id text NOT NULL,
  -- The definition as it was when the run started: editing the workflow changes no run in progress.
  definition jsonb NOT NULL,
  params jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'waiting', 'complete', 'failed', 'cancelled')),
  triggered_by text NOT NULL,
  session_id uuid,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX IF NOT EXISTS workflow_runs_active ON workflow_runs (status) WHERE status IN ('running', 'waiting');
CREATE INDEX IF NOT EXISTS workflow_runs_workflow ON workflow_runs (workflow_id, created_at DESC);

CREATE TABLE IF NOT EXISTS workflow_steps (
  run_id uuid NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
  ordinal int NOT NULL,
  step_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'waiting_approval', 'running', 'complete', 'failed', 'skipped', 'cancelled')),
  approved boolean NOT NULL DEFAULT false,
  attempts int NOT NULL DEFAULT 0,
  task_id uuid,
  result text,
  error text,
  started_at timestamptz,
  finished_at timestamptz,
  PRIMARY KEY (run_id, ordinal)
);
