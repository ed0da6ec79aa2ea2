/**
 * Backups of the whole installation, made while the server serves: the database (Dump.ts) and the
 * data directory's files into one archive (Archive.ts) under BACKUP_DIR, with progress kept in the
 * history as it goes. At most one runs at a time across every process; BACKUP_RETENTION archives
 * are kept; BACKUP_INTERVAL_HOURS schedules them (whichever process sees one is due first makes it).
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, FiberSet, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AppConfig } from "../config/AppConfig.ts"
import { DatabaseInfo } from "../db/Database.ts"
import { BackupIntervalHours, BackupRetention } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { failureText } from "../telemetry/Failure.ts"
import { traced } from "../telemetry/Spans.ts"
import { copyDataFiles, excludedFromFiles, pack, writeManifest } from "./Archive.ts"
import { dataTables, dumpDatabase } from "./Dump.ts"
import { BackupNotFound, BackupRunning } from "./Errors.ts"
import { Backup } from "./Model.ts"
import { type BackupRow, BackupsRepo } from "./Repo.ts"

/** How often the schedule looks whether a backup is due. */
const scheduleCheck = Schedule.spaced(Duration.minutes(1))

/** A backup still `running` after this long was left by a process that stopped. */
const abandonedAfterMs = 6 * 3600 * 1000

export const toBackup = (row: BackupRow) =>
  new Backup({ ...row, download_url: row.status === "complete" ? `/api/v1/admin/operations/backup/${row.id}/download` : null })

const archiveName = (at: Date) => `cairn-backup-${at.toISOString().replace(/[:.]/g, "-")}.tar.gz`

export class Backups extends Effect.Service<Backups>()("cairn/Backups", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* BackupsRepo
    const settings = yield* Settings
    const info = yield* DatabaseInfo
    const sql = yield* SqlClient.SqlClient
    const dataDir = path.resolve(config.dataDir)
    const backupDir = path.resolve(Option.getOrElse(config.backupDir, () => path.join(dataDir, "backups")))
    // Backups outlive the request that started them; closing the service interrupts them.
    const running = yield* FiberSet.make()
    const progress = new Map<string, { readonly done: number; readonly total: number; readonly rows: number }>()
    const stagingOf = new Map<string, string>()
    const partialOf = new Map<string, string>()
    /** A running backup's row with the progress this process knows of it. */
    const withProgress = (row: BackupRow): BackupRow => {
      const known = progress.get(row.id)
      return known && row.status === "running"
        ? { ...row, tables_done: known.done, tables_total: known.total, rows_written: known.rows }
        : row
    }

    const make = (row: BackupRow) =>
      Effect.gen(function*() {
        // Outside the data directory: its files are copied in (a copy may not go into itself).
        const staging = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-backup-"))
        stagingOf.set(row.id, staging)
        // Progress is kept here while the dump's transaction holds the connection (PGlite has one),
        // and written with the result.
        const { schemaVersion, tables } = yield* dumpDatabase(path.join(staging, "database"), (done, total, rows) =>
          Effect.sync(() => progress.set(row.id, { done, total, rows }))).pipe(Effect.provideService(SqlClient.SqlClient, sql))
        const files = copyDataFiles(dataDir, path.join(staging, "files"), excludedFromFiles(dataDir, backupDir))
        writeManifest(staging, {
          format: "cairn-backup",
          version: 1,
          created_at: row.started_at.toISOString(),
          backend: info.backend,
          schema_version: schemaVersion,
          tables,
          files
        })
        // Written beside its name and renamed when whole: no half archive ever carries the name. It
        // holds every secret of the installation, so it is readable by this user alone.
        const archive = path.join(backupDir, row.file_name)
        const partial = `${archive}.partial`
        fs.closeSync(fs.openSync(partial, "w", 0o600))
        partialOf.set(row.id, partial)
        yield* pack(staging, partial)
        fs.renameSync(partial, archive)
        partialOf.delete(row.id)
        const rows = tables.reduce((n, t) =>
          n + t.rows, 0)
        yield* repo.complete(row.id, { sizeBytes: fs.statSync(archive).size, files, schemaVersion, tables: tables.length, rows })
        yield* Effect.logInfo(`Backup ${row.file_name} made: ${rows} rows, ${files} files`)
        for (const expired of yield* repo.expire(yield* settings.get(BackupRetention))) {
          fs.rmSync(path.join(backupDir, expired.file_name), { force: true })
        }
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.zipRight(Effect.logError("Backup failed", cause), repo.fail(row.id, failureText(cause).slice(0, 2000)))
        ),
        Effect.onInterrupt(() => repo.fail(row.id, "The server stopped while the backup ran")),
        Effect.ensuring(
          Effect.sync(() => {
            const staging = stagingOf.get(row.id)
            if (staging) fs.rmSync(staging, { recursive: true, force: true })
            stagingOf.delete(row.id)
            const partial = partialOf.get(row.id)
            if (partial) fs.rmSync(partial, { force: true })
            partialOf.delete(row.id)
            progress.delete(row.id)
          })
        )
      )

    /** Starts a backup in the background; answers it as it starts (its progress is in the history). */
    const start = (trigger: "manual" | "scheduled") =>
      Effect.gen(function*() {
        fs.mkdirSync(backupDir, { recursive: true, mode: 0o700 })
        const now = new Date()
        const row = yield* repo.begin(randomUUID(), trigger, archiveName(now))
        if (!row) {
          return yield* new BackupRunning({
            detail: "A backup is already running; its progress is in GET /api/v1/admin/operations/backup/history"
          })
        }
        // Counted before the dump starts, so the answer (and a progress bar) starts at 0 of all.
        const tables = yield* Effect.orDie(Effect.provideService(dataTables, SqlClient.SqlClient, sql))
        progress.set(row.id, { done: 0, total: tables.length, rows: 0 })
        const started = toBackup(withProgress(row))
        yield* FiberSet.run(running, make(row))
        return started
      })

    const get = (id: string) =>
      Effect.flatMap(
        repo.find(id),
        (
          row
        ) => (row ? Effect.succeed(toBackup(withProgress(row))) : Effect.fail(new BackupNotFound({ detail: `Backup not found: ${id}` })))
      )

    const history = (limit: number) => Effect.map(repo.history(limit), (rows) => rows.map((row) => toBackup(withProgress(row))))

    /** The archive of a complete backup, when this process's BACKUP_DIR holds it. */
    const archive = (id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(id)
        const file = row ? path.join(backupDir, row.file_name) : ""
        if (!row || row.status !== "complete" || !fs.existsSync(file)) {
          return yield* new BackupNotFound({ detail: `No archive kept here for backup ${id}` })
        }
        return { file, name: row.file_name }
      })

    // On PGlite this is the only process: a backup still running was left by the last one.
    yield* repo.abandon(info.backend === "pglite" ? new Date() : new Date(Date.now() - abandonedAfterMs))
    // The schedule: a backup when the newest one is older than the interval (a failed one counts,
    // so a backup that keeps failing is tried once an interval, not every minute).
    yield* Effect.gen(function*() {
      const hours = yield* settings.get(BackupIntervalHours)
      if (hours === 0) return
      const last = yield* repo.lastStarted
      if (last && Date.now() - last.getTime() < hours * 3600 * 1000) return
      yield* start("scheduled").pipe(Effect.catchTag("BackupRunning", () => Effect.void))
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Scheduled backup check failed", cause)),
      Effect.repeat(scheduleCheck),
      Effect.forkScoped
    )

    return traced("Backups", { start, get, history, archive, backupDir } as const)
  }),
  dependencies: [BackupsRepo.Default, Settings.Default]
}) {}
