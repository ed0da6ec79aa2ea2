-- Scoped API keys: only a SHA-256 hash of the value is kept (values are 32 random bytes, so a fast
-- hash is enough), with a short display prefix so an admin can tell keys apart.
CREATE TABLE IF NOT EXISTS api_keys (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  display_prefix text NOT NULL,
  scopes jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz
);

-- Users: local (scrypt password hash) or linked to an OpenID provider (issuer + subject).
CREATE TABLE IF NOT EXISTS users (
  id uuid PRIMARY KEY,
  username text NOT NULL UNIQUE,
  email text,
  display_name text,
  password_hash text,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  oidc_issuer text,
  oidc_subject text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (oidc_issuer, oidc_subject)
);

-- Refresh tokens, hashed. Each refresh rotates the token within its family; presenting a rotated
-- token again revokes the whole family (the token was stolen or replayed).
CREATE TABLE IF NOT EXISTS refresh_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  family_id uuid NOT NULL,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  rotated_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS refresh_tokens_family ON refresh_tokens (family_id);

-- OpenID login attempts between /auth/oidc/start and the callback (any server process may get the
-- callback, so they live here). Rows are single use and short-lived.
CREATE TABLE IF NOT EXISTS oidc_logins (
  state text PRIMARY KEY,
  code_verifier text NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL
);
