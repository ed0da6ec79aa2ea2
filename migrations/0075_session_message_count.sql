-- How many messages each session holds, kept by the statement that stores a message (the same
-- update that touches the session, sessions/Repo.ts). A process's history window checks a read
-- against it (sessions/History.ts) instead of counting the window's rows each turn, which on the
-- embedded database (never vacuumed) visited every row of the window. Messages are only ever
-- removed with their session, so the count never goes down.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS message_count bigint NOT NULL DEFAULT 0;
UPDATE sessions SET message_count = (SELECT count(*) FROM messages WHERE messages.session_id = sessions.id);
