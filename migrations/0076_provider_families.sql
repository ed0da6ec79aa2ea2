-- Prompt-cache tokens (of prompt_tokens, those read from and written to a provider's cache) and
-- whether the counts were estimated here because the provider reported none. Providers may be of
-- the anthropic or gemini family now (the type column was always there, only openai was written).
ALTER TABLE llm_usage ADD COLUMN IF NOT EXISTS cache_read_tokens int NOT NULL DEFAULT 0;
ALTER TABLE llm_usage ADD COLUMN IF NOT EXISTS cache_write_tokens int NOT NULL DEFAULT 0;
ALTER TABLE llm_usage ADD COLUMN IF NOT EXISTS estimated boolean NOT NULL DEFAULT false;
ALTER TABLE llm_providers DROP CONSTRAINT IF EXISTS llm_providers_type_check;
ALTER TABLE llm_providers ADD CONSTRAINT llm_providers_type_check CHECK (type IN ('openai', 'anthropic', 'gemini'));
