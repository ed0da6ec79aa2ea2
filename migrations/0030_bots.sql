-- Bots: loaded from YAML files in bots/ (source 'file') or created through the admin API
-- (source 'api'). A file bot edited through the API becomes an 'api' bot, so a restart does not
-- overwrite the edit with the file.
CREATE TABLE IF NOT EXISTS bots (
  id text PRIMARY KEY,
  config jsonb NOT NULL,
  source text NOT NULL DEFAULT 'api' CHECK (source IN ('file', 'api')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
