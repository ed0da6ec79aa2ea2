-- Speech-to-text calls are measured in seconds of audio, not tokens.
ALTER TABLE llm_usage ADD COLUMN IF NOT EXISTS audio_seconds double precision NOT NULL DEFAULT 0;
