-- The next slot of a workflow's schedule trigger; the engine moves it on with a conditional update,
-- so a slot starts one run whichever process sees it.
ALTER TABLE workflows ADD COLUMN IF NOT EXISTS next_at timestamptz;
