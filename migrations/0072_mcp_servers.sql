-- MCP servers Cairn connects to as a client (the admin API, or MCP_SERVERS_FILE as source 'file').
-- The values of env (stdio) and headers (http) may be credentials: each is sealed at rest
-- ("v1:..." under a key derived from the server secret), like provider keys.
CREATE TABLE IF NOT EXISTS mcp_servers (
  name text PRIMARY KEY,
  transport text NOT NULL CHECK (transport IN ('stdio', 'http')),
  command text,
  args jsonb NOT NULL DEFAULT '[]'::jsonb,
  env_sealed jsonb NOT NULL DEFAULT '{}'::jsonb,
  url text,
  headers_sealed jsonb NOT NULL DEFAULT '{}'::jsonb,
  enabled boolean NOT NULL DEFAULT true,
  timeout_ms integer NOT NULL DEFAULT 30000,
  source text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
