-- What the agent did, kept for the operator: one row per span of a turn (the turn itself, each LLM
-- call, each tool call, each hook). GET /admin/logs reads the turn spans with their LLM and tool
-- spans folded in, /admin/tool-calls the tool spans (arguments with secrets masked), and
-- /admin/traces/{correlation_id} every span of one turn. Written in batches, off the turn's path.
CREATE TABLE IF NOT EXISTS trace_spans (
  id uuid PRIMARY KEY,
  correlation_id text NOT NULL,
  parent_id uuid,
  kind text NOT NULL CHECK (kind IN ('turn', 'llm', 'tool', 'hook')),
  name text NOT NULL,
  bot_id text,
  session_id text,
  started_at timestamptz NOT NULL,
  duration_ms int NOT NULL,
  status text NOT NULL CHECK (status IN ('ok', 'error', 'cancelled')),
  error text,
  attributes jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX IF NOT EXISTS trace_spans_correlation ON trace_spans (correlation_id, started_at);
CREATE INDEX IF NOT EXISTS trace_spans_kind_started ON trace_spans (kind, started_at DESC);
