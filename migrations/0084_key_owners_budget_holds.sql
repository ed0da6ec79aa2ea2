-- Issue 62, fair shares and budgets that a dead process cannot hold.

-- The signed-in user who made an API key (none for keys made with the static key or before this):
-- the calls of a user's many keys wait in one lane at the provider (providers/Gate.ts). A user
-- deleted leaves the key ownerless, a lane of its own.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS owner_user_id uuid REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX IF NOT EXISTS api_keys_owner_user_id ON api_keys (owner_user_id);

-- One row per call holding a reservation on a budget's period (the period row keeps the sums).
-- The process making the call (`owner`) renews `seen_at` while the call lasts; a hold not renewed
-- for a while, or whose process on this host is gone, is given back by any process, so a process
-- killed mid-call does not keep its worst case reserved until the period ends.
CREATE TABLE IF NOT EXISTS budget_holds (
  id uuid PRIMARY KEY,
  budget_id text NOT NULL,
  period_start timestamptz NOT NULL,
  tokens bigint NOT NULL,
  usd double precision NOT NULL,
  owner text NOT NULL,
  seen_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (budget_id, period_start) REFERENCES budget_periods (budget_id, period_start) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS budget_holds_seen_at ON budget_holds (seen_at);
CREATE INDEX IF NOT EXISTS budget_holds_owner ON budget_holds (owner);
CREATE INDEX IF NOT EXISTS budget_holds_period ON budget_holds (budget_id, period_start);
