-- Who made a todo: `bot:<id>` for the todos tool, or the caller of POST /api/v1/todos.
ALTER TABLE todos ADD COLUMN IF NOT EXISTS created_by text NOT NULL DEFAULT '';
