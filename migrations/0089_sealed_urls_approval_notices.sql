-- A dispatch or webhook URL is a credential as a whole (a Slack incoming webhook's secret is its
-- path; other receivers put theirs in parameters of any name, such as `hmac`): from this release
-- such a URL is stored sealed past its host, and shown as its scheme and host alone. The key is the
-- application's, so the rows are re-sealed at startup by the domain that owns each column
-- (db/Reseal.ts): each name below is one column still to be re-sealed. Sealing is idempotent, and a
-- URL an older release sealed part by part (0073) is opened and sealed whole.
INSERT INTO pending_reseals (name) VALUES
  ('sessions.dispatch_config'),
  ('tasks.dispatch_config'),
  ('channel_heartbeats.dispatch_config')
ON CONFLICT (name) DO NOTHING;

-- An approval is told once to where its run came from (the bridge chat, a Slack thread): the
-- process that claims `notified_at` posts it, whichever of several processes saw it first.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS notified_at timestamptz;
