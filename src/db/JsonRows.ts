/**
 * A batch of rows inserted from one JSON parameter (`json_populate_recordset`), so the statement's
 * text is the same whatever the batch's size and it stays prepared. `sql.insert` writes a
 * placeholder for each value: each batch size was a statement of its own, planned afresh on PGlite
 * (a hundred trace spans took it 12–18 ms), and each took one of the names PostgreSQL's pool gives
 * out (db/Database.ts), which the turn's own statements need.
 */
import type { SqlClient } from "@effect/sql"

/** PostgreSQL's text takes no NUL; a lone surrogate, which JSON would escape and PostgreSQL refuse, becomes U+FFFD as a UTF-8 parameter's would. */
const storable = (text: string) =>
  // eslint-disable-next-line no-control-regex -- NUL is what is removed
  text.replace(/\u0000/g, "").replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")

/** The rows as the statement's parameter; every string in them (nested ones too) made storable. */
export const rowsJson = (rows: ReadonlyArray<unknown>): string =>
  JSON.stringify(rows, (_key, value: unknown) => (typeof value === "string" ? storable(value) : value))

/**
 * `INSERT INTO <table> (<columns>) SELECT <columns> FROM json_populate_recordset(...) <tail>`: each
 * row an object keyed by column (a column left out is NULL, not its default); `tail` is an
 * `ON CONFLICT` clause, say. Table, columns and tail are the code's own, never input.
 */
export const jsonRowsInsert = <const Column extends string>(table: string, columns: ReadonlyArray<Column>, tail = "") => {
  const list = columns.join(", ")
  const head = `INSERT INTO ${table} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${table}, `
  return (sql: SqlClient.SqlClient, rows: ReadonlyArray<Readonly<Record<Column, unknown>>>) =>
    sql`${sql.literal(head)}${rowsJson(rows)}::json)${sql.literal(tail)}`
}
