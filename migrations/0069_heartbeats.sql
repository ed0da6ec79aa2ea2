-- A channel's heartbeat: a prompt its bot answers on a schedule, posted through a dispatcher.
-- `next_at` is the next slot; the scheduler (one leader across processes) fires what is due.
CREATE TABLE IF NOT EXISTS channel_heartbeats (
  channel_id uuid PRIMARY KEY REFERENCES channels (id) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT true,
  prompt text NOT NULL,
  interval_seconds int,
  cron text,
  timezone text NOT NULL DEFAULT 'UTC',
  quiet_start text,
  quiet_end text,
  ends_at timestamptz,
  only_when_something boolean NOT NULL DEFAULT true,
  catch_up boolean NOT NULL DEFAULT false,
  dispatch_type text NOT NULL DEFAULT 'none',
  dispatch_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  anchor timestamptz NOT NULL DEFAULT now(),
  next_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((interval_seconds IS NULL) <> (cron IS NULL))
);
CREATE INDEX IF NOT EXISTS channel_heartbeats_due ON channel_heartbeats (next_at) WHERE enabled;

-- Each firing: a slot fires at most once (the unique key), whichever process tries it.
CREATE TABLE IF NOT EXISTS heartbeat_runs (
  id uuid PRIMARY KEY,
  channel_id uuid NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  slot timestamptz NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'catch_up', 'manual')),
  status text NOT NULL CHECK (status IN ('running', 'posted', 'silent', 'quiet', 'failed')),
  task_id uuid,
  result text,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  UNIQUE (channel_id, slot)
);
CREATE INDEX IF NOT EXISTS heartbeat_runs_channel ON heartbeat_runs (channel_id, created_at DESC);
CREATE INDEX IF NOT EXISTS heartbeat_runs_running ON heartbeat_runs (status) WHERE status = 'running';
