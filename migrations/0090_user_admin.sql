-- Users managed in the console (issue 58): a user can be disabled (no sign-in, tokens refused), the
-- last sign-in is kept, and access tokens issued before `tokens_valid_after` are refused (a password
-- change, a disable or "sign out everywhere" reaches signed tokens, which are otherwise checked
-- without a lookup).
ALTER TABLE users ADD COLUMN IF NOT EXISTS disabled_at timestamptz;
ALTER TABLE users ADD COLUMN IF NOT EXISTS last_login_at timestamptz;
ALTER TABLE users ADD COLUMN IF NOT EXISTS tokens_valid_after timestamptz;

-- One-time links: an invitation (a new user chooses a username and password) or, with `user_id`, a
-- password reset for that user. Only a SHA-256 hash of the token is kept (32 random bytes), with a
-- short display prefix; a link is spent by `used_at` and lapses at `expires_at`.
CREATE TABLE IF NOT EXISTS invitations (
  id uuid PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  display_prefix text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  username_hint text,
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  used_by uuid REFERENCES users (id) ON DELETE SET NULL
);
