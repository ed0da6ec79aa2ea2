-- Counters every server process checks and counts in one atomic step (issue 62).

-- Failed sign-ins per guessing source (a client address): counted and checked in one upsert, so a
-- burst of parallel guesses, on one process or several, runs exactly the free few.
CREATE TABLE IF NOT EXISTS signin_strikes (
  source TEXT PRIMARY KEY,
  failures INTEGER NOT NULL,
  last_failure TIMESTAMPTZ NOT NULL,
  locked_until TIMESTAMPTZ,
  -- Whether the last attempt was let through (what the upsert answers).
  admitted BOOLEAN NOT NULL DEFAULT true
);
CREATE INDEX IF NOT EXISTS signin_strikes_last_failure ON signin_strikes (last_failure);

-- One row per running run of a credential (RUNS_PER_CREDENTIAL_MAX), taken under the credential's
-- advisory lock. `owner` is the process that holds it and renews `seen_at`; a slot not seen for a
-- while belongs to a process that is gone and no longer counts.
CREATE TABLE IF NOT EXISTS run_slots (
  id UUID PRIMARY KEY,
  credential TEXT NOT NULL,
  owner TEXT NOT NULL,
  seen_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS run_slots_credential ON run_slots (credential, seen_at);
CREATE INDEX IF NOT EXISTS run_slots_owner ON run_slots (owner);
