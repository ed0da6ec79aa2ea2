-- A session's summary (POST /sessions/{id}/summarize): context assembly sends it in place of the
-- messages it covers, those up to summary_through (a message seq).
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS summary text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS summary_through bigint;
