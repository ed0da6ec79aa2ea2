-- Task result delivery: a delivery in progress holds a lease, so a delivery whose process died is
-- picked up again, and two processes never deliver the same result at once.
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS delivery_lease_until timestamptz;
CREATE INDEX IF NOT EXISTS tasks_delivery_pending ON tasks (completed_at) WHERE delivery_status = 'pending';
CREATE INDEX IF NOT EXISTS tasks_bot ON tasks (bot_id, created_at);
CREATE INDEX IF NOT EXISTS tasks_status ON tasks (status, created_at);
