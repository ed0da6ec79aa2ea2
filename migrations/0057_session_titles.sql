-- A session's title, as the companion clients list it: set from the first user message, editable.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS title text;
-- Sessions that already have messages take the first user message's text as their title.
UPDATE sessions s SET title = left(regexp_replace(m.content, '\s+', ' ', 'g'), 80)
  FROM (SELECT DISTINCT ON (session_id) session_id, content FROM messages
        WHERE role = 'user' AND content IS NOT NULL AND btrim(content) <> '' ORDER BY session_id, seq) m
  WHERE s.id = m.session_id AND s.title IS NULL;
