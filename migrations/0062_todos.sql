-- Todos: what a bot (through its `todos` tool) or an operator keeps track of. One table for both:
-- the operator resource (`todos:read`/`todos:write`) reads and writes these same rows.
CREATE TABLE IF NOT EXISTS todos (
  id uuid PRIMARY KEY,
  bot_id text NOT NULL,
  channel_id uuid,
  session_id uuid,
  title text NOT NULL,
  notes text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'open',
  due_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX IF NOT EXISTS todos_bot_status ON todos (bot_id, status, created_at);
