-- Channels: where a client (an app, an integration's external conversation) talks to a bot. One
-- channel per (client_id, bot_id): the unique constraint makes get-or-create race-free across
-- server processes. bot_id and active_session_id carry no foreign key: bots are checked by the
-- service when a channel is made, and a channel outlives the session it last pointed at.
CREATE TABLE IF NOT EXISTS channels (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  bot_id text NOT NULL,
  client_id text NOT NULL,
  require_mention boolean NOT NULL DEFAULT false,
  passive_memory boolean NOT NULL DEFAULT false,
  workspace_enabled boolean NOT NULL DEFAULT false,
  active_session_id uuid,
  model_override text,
  integration_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT channels_client_bot UNIQUE (client_id, bot_id)
);
CREATE INDEX IF NOT EXISTS channels_bot ON channels (bot_id);
