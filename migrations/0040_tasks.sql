-- Tasks: agent work that runs in the background (queued chat messages, injected messages).
-- Workers claim with FOR UPDATE SKIP LOCKED; a claim holds a lease that a live worker renews.
CREATE TABLE IF NOT EXISTS tasks (
  id uuid PRIMARY KEY,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'complete', 'failed', 'cancelled')),
  source text NOT NULL DEFAULT 'chat',
  bot_id text NOT NULL,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  channel_id uuid,
  client_id text NOT NULL DEFAULT 'default',
  prompt text NOT NULL,
  prompt_stored boolean NOT NULL DEFAULT false,
  model_override text,
  result text,
  error text,
  client_actions jsonb NOT NULL DEFAULT '[]'::jsonb,
  dispatch_type text NOT NULL DEFAULT 'none',
  dispatch_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  execution_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  attempts integer NOT NULL DEFAULT 0,
  worker text,
  lease_until timestamptz,
  run_id uuid,
  delivery_status text NOT NULL DEFAULT 'none',
  delivery_error text,
  delivery_attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at timestamptz,
  completed_at timestamptz
);
CREATE INDEX IF NOT EXISTS tasks_pending ON tasks (created_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS tasks_session ON tasks (session_id, created_at);
