-- Per bot: the sites allowed to embed its widget (frame `/widget/<bot>`), edited at runtime in the
-- console, on top of WIDGET_EMBED_ORIGINS (every bot's). Origins as the browser spells them:
-- scheme, host and port.
CREATE TABLE IF NOT EXISTS widget_settings (
  bot_id text PRIMARY KEY REFERENCES bots (id) ON DELETE CASCADE,
  allowed_origins jsonb NOT NULL DEFAULT '[]'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
