/**
 * SQL for backups and restores (Dump.ts, Restore.ts): the catalogue's tables, columns, foreign keys
 * and sequences, a table read through a cursor, rows loaded from JSON, and the settings of the
 * transactions they run in. The table and column names come from the catalogue (or a backup's
 * manifest, checked against it), quoted as identifiers; values go as parameters.
 *
 * Backups and `cairn restore` use it through `dumpRepo`, since a restore runs on the database alone,
 * without the server's services.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CountRow, decodeRows, firstRow, repository } from "../db/Repository.ts"

export const quoteIdent = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

const NameRow = Schema.Struct({ name: Schema.String })
const VersionRow = Schema.Struct({ version: Schema.NullOr(Schema.Number) })
const LineRow = Schema.Struct({ j: Schema.String })
const ForeignKeyRow = Schema.Struct({ child: Schema.String, parent: Schema.String })
const RoleRow = Schema.Struct({ superuser: Schema.Boolean })
const SerialRow = Schema.Struct({ table_name: Schema.String, column_name: Schema.String })

/** A foreign key between two tables of the schema: `child` points to `parent`. */
export type ForeignKey = typeof ForeignKeyRow.Type

/** The one cursor a dump reads a table through (one table at a time, inside its transaction). */
const cursor = "cairn_backup"

/** The repository on the current `SqlClient`. */
export const dumpRepo = Effect.map(SqlClient.SqlClient, (sql) => {
  const names = decodeRows(NameRow)
  const counts = decodeRows(CountRow)
  return repository("DumpRepo", {
    /** Every table of the current schema, by name. */
    tables: sql.unsafe(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`).pipe(
      names,
      Effect.map((rows) => rows.map((row) => row.name))
    ),
    /** How many tables the current schema has. */
    tableCount: sql.unsafe(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = current_schema()`).pipe(
      counts,
      Effect.map((rows) => firstRow(rows)?.n ?? 0)
    ),
    /** Drops these tables (and what depends on them). */
    dropTables: (tables: ReadonlyArray<string>) =>
      tables.length === 0 ? Effect.void : Effect.asVoid(sql.unsafe(`DROP TABLE IF EXISTS ${tables.map(quoteIdent).join(", ")} CASCADE`)),
    /** The newest migration applied: the schema a dump belongs to (0 before any). */
    schemaVersion: sql.unsafe(`SELECT max(migration_id)::int AS version FROM cairn_migrations`).pipe(
      decodeRows(VersionRow),
      Effect.map((rows) => firstRow(rows)?.version ?? 0)
    ),
    /** Makes the open transaction one read-only snapshot: every table read of the same instant. */
    readOnlySnapshot: Effect.asVoid(sql.unsafe(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`)),
    /** Whether a table has a bytea column (a table of files, whose rows may be tens of megabytes). */
    hasBinaryColumn: (table: string) =>
      sql
        .unsafe(
          `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND data_type = 'bytea'`,
          [table]
        )
        .pipe(counts, Effect.map((rows) => (firstRow(rows)?.n ?? 0) > 0)),
    /** Opens the dump's cursor on a table's rows, each as its JSON text. */
    openCursor: (table: string) =>
      Effect.asVoid(sql.unsafe(`DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS j FROM ${quoteIdent(table)} t`)),
    /** The next rows of the open cursor as JSON texts (none at its end). */
    fetchCursor: (rows: number) =>
      sql.unsafe(`FETCH ${Math.max(1, Math.floor(rows))} FROM ${cursor}`).pipe(
        decodeRows(LineRow),
        Effect.map((lines) => lines.map((line) => line.j))
      ),
    closeCursor: Effect.asVoid(sql.unsafe(`CLOSE ${cursor}`)),
    /** The foreign keys between the tables of the current schema. */
    foreignKeys: sql
      .unsafe(
        `SELECT child.relname AS child, parent.relname AS parent
           FROM pg_constraint c
           JOIN pg_class child ON child.oid = c.conrelid
           JOIN pg_class parent ON parent.oid = c.confrelid
          WHERE c.contype = 'f' AND child.relnamespace = current_schema()::regnamespace`
      )
      .pipe(decodeRows(ForeignKeyRow)),
    /** Whether the connection's role is a superuser (who may skip triggers while loading). */
    isSuperuser: sql.unsafe(`SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user`).pipe(
      decodeRows(RoleRow),
      Effect.map((rows) => firstRow(rows)?.superuser === true)
    ),
    /**
     * Whether the open transaction fires triggers (foreign-key checks included): off while rows go
     * in as they were, on again after. A superuser's setting only.
     */
    setTriggers: (on: boolean) => Effect.asVoid(sql.unsafe(`SET LOCAL session_replication_role = ${on ? "origin" : "replica"}`)),
    /** A table's columns that take values (generated ones left out), in their order. */
    writableColumns: (table: string) =>
      sql
        .unsafe(
          `SELECT column_name AS name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
          [table]
        )
        .pipe(
          names,
          Effect.map((rows) => rows.map((row) => row.name))
        ),
    /** Inserts rows, each a JSON object's text, into these columns of a table. */
    insertJson: (table: string, columns: ReadonlyArray<string>, lines: ReadonlyArray<string>) => {
      const list = columns.map(quoteIdent).join(", ")
      return Effect.asVoid(
        sql.unsafe(
          `INSERT INTO ${quoteIdent(table)} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${quoteIdent(table)}, $1::json)`,
          [
            `[${lines.join(",")}]`
          ]
        )
      )
    },
    /** The serial and identity columns of the current schema, with their tables. */
    serialColumns: sql
      .unsafe(
        `SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND (column_default LIKE 'nextval(%' OR is_identity = 'YES')`
      )
      .pipe(decodeRows(SerialRow)),
    /** Sets a serial column's sequence to go on from the column's highest value. */
    advanceSequence: (table: string, column: string) =>
      Effect.asVoid(
        sql.unsafe(
          `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(coalesce(max(${quoteIdent(column)}), 0), 1), max(${
            quoteIdent(column)
          }) IS NOT NULL) FROM ${quoteIdent(table)}`,
          [quoteIdent(table), column]
        )
      )
  })
})

export type DumpRepo = Effect.Effect.Success<typeof dumpRepo>
