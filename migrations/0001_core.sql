-- Server settings changed at runtime (admin settings API). A stored value beats the environment,
-- which beats the built-in default.
CREATE TABLE IF NOT EXISTS settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
