/**
 * The database as files and back, the same on PGlite and PostgreSQL: each data table as JSON lines
 * (`row_to_json`, read through a cursor inside one repeatable-read, read-only transaction, so every
 * table is of the same instant while the server keeps serving), loaded back with
 * `json_populate_recordset` in foreign-key order inside one transaction, sequences set after. Plain
 * SQL on purpose (its statements are in DumpRepo.ts): `pg_dump` is not there for PGlite, and a
 * logical dump restores across backends and into a schema of the same release the backup was made by.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { StringDecoder } from "node:string_decoder"
import { transactions } from "../db/Repository.ts"
import { dumpRepo, type ForeignKey } from "./DumpRepo.ts"

/** Tables not in a backup: the migrations' own record (a restore replays them) and the backup history. */
const notBackedUp = ["cairn_migrations", "backups"]

export interface TableDump {
  readonly name: string
  readonly rows: number
}

/** Rows read per cursor fetch and written per insert. */
const batchRows = 1000
/** An insert's JSON stays under this many characters, whatever the rows weigh. */
const batchChars = 8 * 1024 * 1024

/** The tables a backup dumps (every table of the schema but the ones it leaves out). */
export const dataTables = Effect.flatMap(
  dumpRepo,
  (repo) => Effect.map(repo.tables, (tables) => tables.filter((name) => !notBackedUp.includes(name)))
)

/** The newest migration applied: the schema a dump belongs to. */
export const schemaVersion = Effect.flatMap(dumpRepo, (repo) => repo.schemaVersion)

/**
 * Writes every data table into `dir` as `<table>.jsonl`; `progress` hears after each table.
 * Answers the schema version and the tables with their row counts.
 */
export const dumpDatabase = (dir: string, progress: (done: number, total: number, rows: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const repo = yield* dumpRepo
    return yield* transactions(yield* SqlClient.SqlClient)(
      Effect.gen(function*() {
        yield* repo.readOnlySnapshot
        const version = yield* repo.schemaVersion
        const tables = yield* dataTables
        fs.mkdirSync(dir, { recursive: true })
        const dumped: Array<TableDump> = []
        let total = 0
        for (const [index, name] of tables.entries()) {
          // A table of files (bytea) is read a row at a time: one row may be tens of megabytes.
          const fetchRows = (yield* repo.hasBinaryColumn(name)) ? 1 : batchRows
          const rows = yield* Effect.acquireUseRelease(
            Effect.sync(() => fs.openSync(path.join(dir, `${name}.jsonl`), "w")),
            (fd) =>
              Effect.gen(function*() {
                let rows = 0
                yield* repo.openCursor(name)
                for (;;) {
                  const batch = yield* repo.fetchCursor(fetchRows)
                  if (batch.length === 0) break
                  for (const line of batch) fs.writeSync(fd, line + "\n")
                  rows += batch.length
                }
                yield* repo.closeCursor
                return rows
              }),
            (fd) => Effect.sync(() => fs.closeSync(fd))
          )
          dumped.push({ name, rows })
          total += rows
          yield* progress(index + 1, tables.length, total)
        }
        return { schemaVersion: version, tables: dumped }
      })
    )
  })

/** The lines of an open file in batches (by count and by size), read a megabyte at a time; the caller closes it. */
function* lineBatches(fd: number): Generator<Array<string>> {
  const buffer = Buffer.alloc(1024 * 1024)
  const decoder = new StringDecoder("utf8")
  let rest = ""
  let batch: Array<string> = []
  let chars = 0
  for (let read = fs.readSync(fd, buffer); read > 0; read = fs.readSync(fd, buffer)) {
    const lines = (rest + decoder.write(buffer.subarray(0, read))).split("\n")
    rest = lines.pop()!
    for (const line of lines) {
      if (line.length === 0) continue
      batch.push(line)
      chars += line.length
      if (batch.length >= batchRows || chars >= batchChars) {
        yield batch
        batch = []
        chars = 0
      }
    }
  }
  rest += decoder.end()
  if (rest.length > 0) batch.push(rest)
  if (batch.length > 0) yield batch
}

/** Tables ordered so each comes after the tables its foreign keys point to (self-references aside). */
const inDependencyOrder = (tables: ReadonlyArray<string>, edges: ReadonlyArray<ForeignKey>) => {
  const pending = new Set(tables)
  const ordered: Array<string> = []
  while (pending.size > 0) {
    const ready = [...pending].filter((table) => !edges.some((e) => e.child === table && e.parent !== table && pending.has(e.parent)))
    // A cycle of foreign keys (none today): the rest in name order; a superuser load skips the checks anyway.
    const next = ready.length > 0 ? ready : [...pending]
    for (const table of next) {
      ordered.push(table)
      pending.delete(table)
    }
  }
  return ordered
}

/**
 * Loads `<table>.jsonl` files from `dir` into the (empty) tables of the current schema, in one
 * transaction the caller provides. Answers the rows loaded.
 */
export const loadDatabase = (dir: string, tables: ReadonlyArray<string>, onRows: (rows: number) => void = () => {}) =>
  Effect.gen(function*() {
    const repo = yield* dumpRepo
    const superuser = yield* repo.isSuperuser
    // Rows go in as they were, foreign keys included; a superuser can skip their triggers too.
    if (superuser) yield* repo.setTriggers(false)
    let loaded = 0
    for (const name of inDependencyOrder(tables, yield* repo.foreignKeys)) {
      const file = path.join(dir, `${name}.jsonl`)
      if (!fs.existsSync(file)) continue
      const columns = yield* repo.writableColumns(name)
      if (columns.length === 0) return yield* Effect.dieMessage(`The backup has a table ${name} this schema does not`)
      loaded += yield* Effect.acquireUseRelease(
        Effect.sync(() => fs.openSync(file, "r")),
        (fd) =>
          Effect.gen(function*() {
            let rows = 0
            for (const batch of lineBatches(fd)) {
              yield* repo.insertJson(name, columns, batch)
              rows += batch.length
              onRows(batch.length)
            }
            return rows
          }),
        (fd) => Effect.sync(() => fs.closeSync(fd))
      )
    }
    if (superuser) yield* repo.setTriggers(true)
    // Serial and identity columns go on from the highest value restored.
    for (const { table_name, column_name } of yield* repo.serialColumns) yield* repo.advanceSequence(table_name, column_name)
    return loaded
  })
