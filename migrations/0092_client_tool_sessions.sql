-- A client tool request belongs to the session whose run asked it: only a caller that reaches that
-- session may answer it. Requests a previous release opened carry no session (NULL).
ALTER TABLE client_tool_requests ADD COLUMN IF NOT EXISTS session_id UUID;
