/**
 * A backup archive: one `.tar.gz` holding `manifest.json` (format, schema version, tables and row
 * counts), `database/<table>.jsonl` (Dump.ts) and `files/` (the data directory: workspaces, the
 * generated secret; not the PGlite files, which the dump replaces, nor the backups themselves).
 * Written with `tar` (node-tar): the format every operator's tools open.
 */
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as tar from "tar"

export const ManifestSchema = Schema.Struct({
  format: Schema.Literal("cairn-backup"),
  version: Schema.Literal(1),
  created_at: Schema.String,
  backend: Schema.Literal("pglite", "postgres"),
  schema_version: Schema.Number,
  tables: Schema.Array(Schema.Struct({ name: Schema.String, rows: Schema.Number })),
  files: Schema.Number
})
export type Manifest = typeof ManifestSchema.Type

/** What in the data directory is not copied: the embedded database (dumped instead) and the archives. */
export const excludedFromFiles = (dataDir: string, backupDir: string) => {
  const skipped = [path.resolve(dataDir, "pglite"), path.resolve(backupDir)]
  return (source: string) => !skipped.some((dir) => source === dir || source.startsWith(dir + path.sep))
}

/** Copies the data directory's files into `target`; symlinks stay links (never followed out of it). Answers the count. */
export const copyDataFiles = (dataDir: string, target: string, keep: (source: string) => boolean): number => {
  fs.mkdirSync(target, { recursive: true })
  if (!fs.existsSync(dataDir)) return 0
  let count = 0
  fs.cpSync(dataDir, target, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => {
      if (!keep(path.resolve(source))) return false
      if (!fs.lstatSync(source).isDirectory()) count++
      return true
    }
  })
  return count
}

export const writeManifest = (dir: string, manifest: Manifest) =>
  fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest, null, 2))

/** Packs a staging directory (manifest.json, database/, files/) into `file`. */
export const pack = (staging: string, file: string) =>
  Effect.promise(() => tar.c({ gzip: true, file, cwd: staging, portable: true }, ["manifest.json", "database", "files"]))

export class ArchiveUnreadable extends Schema.TaggedError<ArchiveUnreadable>()("ArchiveUnreadable", { detail: Schema.String }) {}

/** Unpacks `file` into `target` and reads its manifest. */
export const unpack = (file: string, target: string) =>
  Effect.gen(function*() {
    if (!fs.existsSync(file)) return yield* new ArchiveUnreadable({ detail: `No such archive: ${file}` })
    fs.mkdirSync(target, { recursive: true })
    yield* Effect.tryPromise({
      // `strict`: a damaged archive fails instead of being half read; node-tar refuses paths outside `target`.
      try: () => tar.x({ file, cwd: target, strict: true }),
      catch: (cause) => new ArchiveUnreadable({ detail: `${file} is not a readable .tar.gz: ${String(cause)}` })
    })
    const manifestFile = path.join(target, "manifest.json")
    if (!fs.existsSync(manifestFile)) return yield* new ArchiveUnreadable({ detail: `${file} has no manifest.json: not a Cairn backup` })
    return yield* Schema.decodeUnknown(Schema.parseJson(ManifestSchema))(fs.readFileSync(manifestFile, "utf8")).pipe(
      Effect.mapError((error) => new ArchiveUnreadable({ detail: `${file} has a manifest this release cannot read: ${error.message}` }))
    )
  })
