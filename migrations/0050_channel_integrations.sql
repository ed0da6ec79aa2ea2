-- Channel integration bindings: an integration type attached to a channel under a client id
-- (`msgbridge:<chat guid>`, `mailbox:<address>`). One client id may be bound to several channels
-- (a group chat served by two bots, one mailbox delivered to several workspaces); the same
-- (channel, type, client id) only once. Deleting a channel deletes its bindings.
CREATE TABLE IF NOT EXISTS channel_integrations (
  id uuid PRIMARY KEY,
  channel_id uuid NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  integration_type text NOT NULL,
  client_id text NOT NULL,
  wake_words jsonb NOT NULL DEFAULT '[]'::jsonb,
  use_bot_wake_word boolean NOT NULL DEFAULT true,
  hud_preset text NOT NULL DEFAULT 'default' CHECK (hud_preset IN ('default', 'none')),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT channel_integrations_unique UNIQUE (channel_id, integration_type, client_id)
);
CREATE INDEX IF NOT EXISTS channel_integrations_client ON channel_integrations (client_id);
