/**
 * Migrated templates for test databases. A server booted on a fresh database migrates it first:
 * 4–11 s on PGlite (every migration through its WebAssembly engine) and about a second on
 * PostgreSQL, and the suite boots hundreds of servers. The global setup (globalSetup.ts) migrates
 * one database of each kind per set of migrations, named by a hash of the migration files (and
 * PGlite's version, whose files are copied), and a test database that asks for it starts as a copy:
 * the directory copied for PGlite, `CREATE DATABASE … TEMPLATE` on PostgreSQL. The schema is the
 * one a first start makes; a server started on it finds no migration pending. Tests of migrations
 * themselves take an empty database (the default of `createTestDatabase`).
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { migrationsDir } from "../../src/db/Migrations.ts"
import { scratchRoot } from "./scratch.ts"

/** PGlite's version, from its package file (the package does not export it). */
const pgliteVersion = (): string => {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
  let dir = path.dirname(entry)
  while (!fs.existsSync(path.join(dir, "package.json")) || path.basename(dir) !== "pglite") dir = path.dirname(dir)
  return (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string }).version
}

let key: string | undefined

/** Names this checkout's migrations: a new or changed migration gives new templates. */
export const templateKey = (): string => (key ??= hashMigrations())

const hashMigrations = (): string => {
  const hash = createHash("sha256").update(pgliteVersion())
  for (const file of fs.readdirSync(migrationsDir).sort()) {
    hash.update(file).update(fs.readFileSync(path.join(migrationsDir, file)))
  }
  return hash.digest("hex").slice(0, 12)
}

/** The migrated PGlite DATA_DIR (it holds `pglite/`), copied into each test database's. */
export const pgliteTemplateDir = (key: string) => path.join(scratchRoot, `cairn-template-${key}`)

/** The migrated PostgreSQL database a test database is created from. */
export const postgresTemplateName = (key: string) => `cairn_template_${key}`
