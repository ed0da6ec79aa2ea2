-- What a user does with their conversations in the chat: pin one to the top of the list, archive
-- one out of it (kept, listed on request), and find one by the words in its title or its messages
-- (PostgreSQL full text, the 'simple' configuration: no stemming, so any language matches as typed).
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS pinned_at timestamptz;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS archived_at timestamptz;
CREATE INDEX IF NOT EXISTS messages_content_search ON messages USING gin (to_tsvector('simple', coalesce(content, '')));
CREATE INDEX IF NOT EXISTS sessions_title_search ON sessions USING gin (to_tsvector('simple', coalesce(title, '')));
