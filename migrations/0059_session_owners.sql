-- Who a session belongs to (docs/api.md "Who reaches a session"): `static`, `scoped_key:<id>`,
-- `user:<id>` or `widget:<identity>`; NULL for sessions the server made itself (channels,
-- integrations, delegation), which only callers that reach every session see.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner text;
CREATE INDEX IF NOT EXISTS sessions_owner_active ON sessions (owner, updated_at DESC);
