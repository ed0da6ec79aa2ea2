/**
 * `cairn restore <archive>`: a backup into an empty database and an empty data directory. The
 * schema is first built as it was when the backup was made (the migrations up to its version), the
 * rows are loaded into it (one transaction), and the newer migrations then bring it to this
 * release. A restore that fails drops the tables it made: the database is as empty as it was.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AppConfig } from "../config/AppConfig.ts"
import * as Migrations from "../db/Migrations.ts"
import { transactions } from "../db/Repository.ts"
import { unpack } from "./Archive.ts"
import { loadDatabase } from "./Dump.ts"
import { dumpRepo } from "./DumpRepo.ts"

export class RestoreRefused extends Schema.TaggedError<RestoreRefused>()("RestoreRefused", { detail: Schema.String }) {}

/** The newest migration this release has. */
const newestMigration = () => Math.max(0, ...fs.readdirSync(Migrations.migrationsDir).map((file) => Number(/^(\d+)_/.exec(file)?.[1] ?? 0)))

/**
 * Every table of the schema (it was empty before the restore began). Best effort: what went wrong
 * with the restore is the failure to report, not a drop that failed after it.
 */
const dropTables = Effect.flatMap(dumpRepo, (repo) => Effect.flatMap(repo.tables, repo.dropTables)).pipe(
  Effect.catchAllCause(() => Effect.void)
)

export interface RestoreSummary {
  readonly tables: number
  readonly rows: number
  readonly files: number
  readonly fromSchema: number
  readonly migrationsApplied: ReadonlyArray<number>
}

/** What a restore reports as it goes: the rows it will load, then each batch loaded. */
export interface RestoreProgress {
  readonly started: (totalRows: number) => void
  readonly loaded: (rows: number) => void
}

export const restore = (archive: string, progress?: RestoreProgress) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* dumpRepo
    const transaction = transactions(yield* SqlClient.SqlClient)
    const dataDir = path.resolve(config.dataDir)
    // The embedded database's own directory is made as soon as it opens; it is empty until now.
    const present = fs.existsSync(dataDir) ? fs.readdirSync(dataDir).filter((name) => name !== "pglite") : []
    if (present.length > 0) {
      return yield* new RestoreRefused({
        detail: `DATA_DIR ${dataDir} is not empty (${present.slice(0, 5).join(", ")}): restore into an empty data directory`
      })
    }
    const tables = yield* repo.tableCount
    if (tables > 0) {
      return yield* new RestoreRefused({ detail: `The database already has ${tables} tables: restore into an empty database` })
    }
    const staging = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-restore-"))
    return yield* Effect.gen(function*() {
      const manifest = yield* unpack(archive, staging)
      const newest = newestMigration()
      if (manifest.schema_version > newest) {
        return yield* new RestoreRefused({
          detail:
            `The backup was made by a newer release (schema ${manifest.schema_version}; this one knows up to ${newest}): restore it with that release or a later one`
        })
      }
      yield* Effect.logInfo(
        `Restoring ${archive}: ${manifest.tables.length} tables of schema ${manifest.schema_version}, made ${manifest.created_at}`
      )
      const { rows, applied } = yield* Effect.gen(function*() {
        yield* Migrations.run({ upTo: manifest.schema_version })
        progress?.started(manifest.tables.reduce((sum, table) => sum + table.rows, 0))
        const rows = yield* transaction(
          loadDatabase(path.join(staging, "database"), manifest.tables.map((table) => table.name), progress?.loaded)
        )
        const applied = yield* Migrations.run()
        return { rows, applied: applied.map(([id]) => id) }
      }).pipe(Effect.tapErrorCause(() => dropTables))
      fs.mkdirSync(dataDir, { recursive: true })
      const files = path.join(staging, "files")
      if (fs.existsSync(files)) fs.cpSync(files, dataDir, { recursive: true, verbatimSymlinks: true })
      const summary: RestoreSummary = {
        tables: manifest.tables.length,
        rows,
        files: manifest.files,
        fromSchema: manifest.schema_version,
        migrationsApplied: applied
      }
      yield* Effect.logInfo(
        `Restored ${rows} rows in ${summary.tables} tables and ${summary.files} files` +
          (applied.length > 0 ? `; migrations ${applied.join(", ")} brought it from schema ${manifest.schema_version} to this release` : "")
      )
      return summary
    }).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(staging, { recursive: true, force: true }))))
  })
