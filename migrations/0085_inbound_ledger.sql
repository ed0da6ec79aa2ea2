-- The inbound ledger: every item that comes in (a bridge message, a mail, an integration's webhook
-- delivery, a result delivery the dispatcher retries) recorded once under its source's id before it
-- is acknowledged, and the state it is in:
--   received -> ignored | passive | queued -> run -> delivered | failed -> dead (-> discarded)
-- What the routing decided at arrival is final: a later catch-up, restart or settings save finds
-- the row and does not act on it again. `dead` is the dead-letter queue (a person retries or
-- discards it). The tasks an item queued carry its id (tasks.inbound_id); the item's state
-- after `queued` follows theirs.
CREATE TABLE IF NOT EXISTS inbound_items (
  id uuid PRIMARY KEY,
  -- Where it came from: the integration's id (msgbridge, mailbox, github ...) or `dispatch`.
  source text NOT NULL,
  -- The source's own id of the item (a message GUID, a Message-ID, a delivery id, a task id).
  external_id text NOT NULL,
  integration text,
  channel_id uuid,
  state text NOT NULL DEFAULT 'received'
    CHECK (state IN ('received', 'ignored', 'passive', 'queued', 'run', 'delivered', 'failed', 'dead', 'discarded')),
  -- Why it is in its state (ignored: unbound, paused, echo ...; dead: what gave up).
  reason text,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  -- What the source needs to act on it again (a retry of a dead letter, a resume after a crash).
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  summary text NOT NULL DEFAULT '',
  received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (source, external_id)
);
CREATE INDEX IF NOT EXISTS inbound_items_open ON inbound_items (updated_at)
  WHERE state IN ('received', 'queued', 'run', 'failed');
CREATE INDEX IF NOT EXISTS inbound_items_dead ON inbound_items (source, updated_at DESC) WHERE state = 'dead';

ALTER TABLE tasks ADD COLUMN IF NOT EXISTS inbound_id uuid;
CREATE INDEX IF NOT EXISTS tasks_inbound ON tasks (inbound_id) WHERE inbound_id IS NOT NULL;
