-- Credentials in URLs (a webhook dispatch_config's ?token=, a provider base URL's api-key=) are
-- sealed at rest from this release. The sealing key lives in the application, not here, so rows
-- stored before are sealed at startup: each name below is one column still to be sealed, done and
-- deleted by the domain that owns the column (db/Reseal.ts).
CREATE TABLE IF NOT EXISTS pending_reseals (
  name TEXT PRIMARY KEY
);

INSERT INTO pending_reseals (name) VALUES
  ('sessions.dispatch_config'),
  ('tasks.dispatch_config'),
  ('channel_heartbeats.dispatch_config'),
  ('llm_providers.base_url')
ON CONFLICT (name) DO NOTHING;
