-- Integration settings saved through the admin API. Values of secret settings are stored
-- encrypted (AES-256-GCM, "v1:" prefix); the resolution order is stored, environment, default.
CREATE TABLE IF NOT EXISTS integration_settings (
  integration_id text NOT NULL,
  key text NOT NULL,
  value text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (integration_id, key)
);

-- The scoped key an integration's background process calls back with (AGENT_API_KEY), created
-- when its settings are first saved; the value is kept encrypted so the process can be restarted.
CREATE TABLE IF NOT EXISTS integration_api_keys (
  integration_id text PRIMARY KEY,
  api_key_id text NOT NULL,
  key_value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
