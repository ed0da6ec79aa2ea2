-- A chat message queued as a task keeps its attachments (images, voice) until its turn stores it.
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS attachments jsonb NOT NULL DEFAULT '[]'::jsonb;
