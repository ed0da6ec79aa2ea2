-- Sessions and their messages. `default_for` is set for the one session the idempotent create
-- returns per (client_id, bot_id); other sessions (explicit ids, resets) leave it null.
CREATE TABLE IF NOT EXISTS sessions (
  id uuid PRIMARY KEY,
  bot_id text NOT NULL,
  client_id text NOT NULL,
  channel_id uuid,
  default_for text UNIQUE,
  dispatch_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS sessions_client_bot ON sessions (client_id, bot_id);

CREATE TABLE IF NOT EXISTS messages (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq bigserial,
  role text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content text,
  tool_calls jsonb,
  tool_call_id text,
  attachments jsonb NOT NULL DEFAULT '[]'::jsonb,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS messages_session_seq ON messages (session_id, seq);

-- One agent run per session at a time: the partial unique index is the lock, so it holds across
-- server processes. A run whose owner stopped heartbeating is taken over (marked failed).
CREATE TABLE IF NOT EXISTS runs (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'cancelled')),
  owner text NOT NULL,
  task_id uuid,
  cancel_requested boolean NOT NULL DEFAULT false,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS runs_one_running ON runs (session_id) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS runs_session_created ON runs (session_id, created_at);

-- Every event a run emitted, for rejoining a live or finished stream without gap or duplicate.
CREATE TABLE IF NOT EXISTS run_events (
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  event jsonb NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- Tool approvals a run waits on; decided through the API, possibly on another process.
CREATE TABLE IF NOT EXISTS approvals (
  id uuid PRIMARY KEY,
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  session_id uuid NOT NULL,
  tool_name text NOT NULL,
  arguments jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  created_at timestamptz NOT NULL DEFAULT now(),
  decided_at timestamptz
);
