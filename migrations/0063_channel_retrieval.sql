-- A channel's retrieval settings over its bot's (null: the bot's as they are).
ALTER TABLE channels ADD COLUMN IF NOT EXISTS retrieval jsonb;
