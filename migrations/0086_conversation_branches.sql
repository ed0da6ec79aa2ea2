-- A conversation's own settings and its branches (the chat's regenerate and edit). A session may
-- name the model that answers it, instructions added to its bot's prompt and a temperature (null:
-- the bot's). A branch is a session that took the first `fork_point` messages of `forked_from` and
-- went on from there (edit and resend, regenerate); a branch whose source is deleted stands alone.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS model text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS system_prompt text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS temperature double precision;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS forked_from uuid REFERENCES sessions (id) ON DELETE SET NULL;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS fork_point integer;
CREATE INDEX IF NOT EXISTS sessions_forked_from ON sessions (forked_from) WHERE forked_from IS NOT NULL;
