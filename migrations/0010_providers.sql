-- LLM providers added through the admin API (the default provider comes from the environment).
-- api_key_encrypted and every extra_headers value are AES-256-GCM under a key derived from the
-- server secret; models carry the per-model price overrides.
CREATE TABLE IF NOT EXISTS llm_providers (
  id text PRIMARY KEY,
  type text NOT NULL DEFAULT 'openai' CHECK (type IN ('openai')),
  base_url text NOT NULL,
  api_key_encrypted text,
  extra_headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  models jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per model tried by an LLM call (a fallback gives two rows). cost_usd is null when the
-- model has no known price.
CREATE TABLE IF NOT EXISTS llm_usage (
  id uuid PRIMARY KEY,
  at timestamptz NOT NULL,
  source text NOT NULL,
  principal_kind text,
  principal_id text,
  bot_id text,
  session_id text,
  provider_id text NOT NULL,
  model text NOT NULL,
  prompt_tokens int NOT NULL DEFAULT 0,
  completion_tokens int NOT NULL DEFAULT 0,
  total_tokens int NOT NULL DEFAULT 0,
  cost_usd double precision,
  duration_ms int NOT NULL,
  outcome text NOT NULL,
  error_kind text
);
CREATE INDEX IF NOT EXISTS llm_usage_at ON llm_usage (at);
