-- Each integration's persisted store (the SDK's `cairn.store`). Values are JSON text, not jsonb:
-- text keeps what JSON.stringify wrote (NUL and lone surrogates arrive escaped), and a
-- compare-and-set compares that text.
CREATE TABLE IF NOT EXISTS integration_kv (
  integration_id text NOT NULL,
  key text NOT NULL,
  value text NOT NULL,
  expires_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (integration_id, key)
);
CREATE INDEX IF NOT EXISTS integration_kv_expiry ON integration_kv (expires_at) WHERE expires_at IS NOT NULL;

-- Bounded LRU sets (message-id dedup). The header row is locked by every change of its set, so
-- concurrent adds from several processes are serialised and the capacity holds exactly; its
-- `clock` orders members by last use.
CREATE TABLE IF NOT EXISTS integration_lru_sets (
  integration_id text NOT NULL,
  name text NOT NULL,
  clock bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (integration_id, name)
);
CREATE TABLE IF NOT EXISTS integration_lru_members (
  integration_id text NOT NULL,
  name text NOT NULL,
  member text NOT NULL,
  used bigint NOT NULL,
  PRIMARY KEY (integration_id, name, member)
);
CREATE INDEX IF NOT EXISTS integration_lru_members_use ON integration_lru_members (integration_id, name, used);
