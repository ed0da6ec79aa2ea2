-- Every summary a session has had (compaction and summarize), numbered: sessions.summary and
-- summary_through keep the newest, which context assembly reads.
CREATE TABLE IF NOT EXISTS session_summaries (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  version int NOT NULL,
  summary text NOT NULL,
  from_seq bigint NOT NULL,
  through_seq bigint NOT NULL,
  trigger text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, version)
);
