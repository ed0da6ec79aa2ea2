-- State several server processes on one database must share (issue 25).

-- A client-side tool's pending request and, once the client answers, its result: the answer may
-- reach any process behind the load balancer, not only the one whose run asked.
CREATE TABLE IF NOT EXISTS client_tool_requests (
  id UUID PRIMARY KEY,
  result TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  answered_at TIMESTAMPTZ
);

-- Rate-limit token buckets, one row per limit and caller, taken from atomically by any process
-- (on PostgreSQL; the embedded database has one process and keeps its buckets in memory).
CREATE TABLE IF NOT EXISTS rate_buckets (
  key TEXT PRIMARY KEY,
  tokens DOUBLE PRECISION NOT NULL,
  at TIMESTAMPTZ NOT NULL DEFAULT now(),
  granted BOOLEAN NOT NULL DEFAULT true
);
CREATE INDEX IF NOT EXISTS rate_buckets_at ON rate_buckets (at);
