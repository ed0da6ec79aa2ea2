-- A conversation's documents (dropped into the chat's composer) are looked up by their session on
-- every search and every turn of a conversation that may have some: an index, so that lookup does
-- not scan every document. Partial: most documents belong to no conversation.
CREATE INDEX IF NOT EXISTS documents_session_idx ON documents (session_id) WHERE session_id IS NOT NULL;
