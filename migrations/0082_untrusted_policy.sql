-- Tool calls held because outside content (a mail, a fetched page, a stranger's message) was in the
-- run's context: an approval says why it was asked and which sources caused it, so the person who
-- decides it (maybe days later, in the approval inbox) sees more than a tool name. The bots'
-- `untrusted_policy` itself lives in their jsonb configuration (default `approve`).
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS reason text NOT NULL DEFAULT 'tool_policy';
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS origins jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS bot_id text;
CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (created_at DESC) WHERE status = 'pending';
