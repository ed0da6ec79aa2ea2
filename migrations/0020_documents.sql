-- Documents for semantic search (issue 7). Each document is split into overlapping chunks; a chunk
-- carries its full-text vector and its embedding with the model and dimension that made it, so a
-- change of model is seen and re-embedded while full-text search keeps working.

-- pgvector where the server has it (PGlite always does). Without it, or without the right to
-- create it, vector search falls back to an exact scan; the server logs that once at startup.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pgvector is available but cannot be created by this role';
    END;
  END IF;
END $$;

CREATE TABLE IF NOT EXISTS documents (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  integration_id text NOT NULL,
  -- The sessions table comes later (issue 5); no foreign key until then.
  session_id uuid,
  title text NOT NULL,
  content text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS documents_integration_idx ON documents (integration_id, created_at);

CREATE TABLE IF NOT EXISTS document_chunks (
  document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  ordinal int NOT NULL,
  -- Copied from the document so a filtered search needs no join.
  integration_id text NOT NULL,
  content text NOT NULL,
  -- The title weighs more than the body.
  search tsvector NOT NULL,
  -- Unit length, so cosine similarity is a dot product. Stored as real[] on every server; where
  -- pgvector exists an HNSW expression index per dimension casts it to vector(n).
  embedding real[] NOT NULL,
  embedding_model text NOT NULL,
  dimension int NOT NULL,
  PRIMARY KEY (document_id, ordinal)
);

CREATE INDEX IF NOT EXISTS document_chunks_search_idx ON document_chunks USING gin (search);
CREATE INDEX IF NOT EXISTS document_chunks_model_idx ON document_chunks (embedding_model);
CREATE INDEX IF NOT EXISTS document_chunks_integration_idx ON document_chunks (integration_id);
