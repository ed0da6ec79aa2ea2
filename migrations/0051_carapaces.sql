-- Carapaces (capability bundles). Like bots: loaded from YAML files (source 'file', origin names
-- the folder's owner: 'core' or 'integration:<id>') or made through the API (source 'api'); a file
-- carapace edited through the API becomes 'api' so a restart does not overwrite the edit.
CREATE TABLE IF NOT EXISTS carapaces (
  id text PRIMARY KEY,
  config jsonb NOT NULL,
  source text NOT NULL DEFAULT 'api' CHECK (source IN ('file', 'api')),
  origin text NOT NULL DEFAULT 'api',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Carapaces attached to a channel, in order. No foreign key to carapaces: a file carapace may
-- vanish between restarts; resolution skips ids it no longer knows.
CREATE TABLE IF NOT EXISTS channel_carapaces (
  channel_id uuid NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  carapace_id text NOT NULL,
  position int NOT NULL,
  PRIMARY KEY (channel_id, carapace_id)
);

-- Carapaces an integration's activation manifest injects into every channel bound to it
-- (matched on channel_integrations.integration_type); replaced whole at each activation.
CREATE TABLE IF NOT EXISTS integration_carapaces (
  integration_id text NOT NULL,
  carapace_id text NOT NULL,
  position int NOT NULL,
  PRIMARY KEY (integration_id, carapace_id)
);
