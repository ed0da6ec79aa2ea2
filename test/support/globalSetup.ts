/**
 * Runs once before the suite (vitest's globalSetup): makes the migrated templates the test
 * databases are copied from (template.ts), unless this set of migrations has them already. Two
 * suites starting at once may both build one; each builds under a name of its own and renames it
 * into place, and the one that finds the place taken drops its copy. A PostgreSQL that cannot be
 * reached leaves its template unmade: its tests then fail with their own clear message.
 */
import * as fs from "node:fs"
import * as Migrations from "../../src/db/Migrations.ts"
import { tempDir, withAdmin, withDatabase } from "./database.ts"
import { pgliteTemplateDir, postgresTemplateName, templateKey } from "./template.ts"

const pgliteTemplate = async (key: string) => {
  const target = pgliteTemplateDir(key)
  if (fs.existsSync(target)) return
  const building = tempDir("cairn-template-building-")
  await withDatabase({ backend: "pglite", databaseUrl: undefined, dataDir: building, drop: async () => {} }, Migrations.run())
  try {
    fs.renameSync(building, target)
  } catch {
    fs.rmSync(building, { recursive: true, force: true })
  }
}

const postgresTemplate = async (key: string) => {
  const target = postgresTemplateName(key)
  const exists = await withAdmin((client) => client.query("SELECT 1 FROM pg_database WHERE datname = $1", [target]))
  if (exists.rowCount! > 0) return
  const building = `${target}_${process.pid}`
  await withAdmin((client) => client.query(`CREATE DATABASE ${building}`))
  const url = new URL(process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres")
  url.pathname = `/${building}`
  const dataDir = tempDir()
  try {
    await withDatabase({ backend: "postgres", databaseUrl: url.toString(), dataDir, drop: async () => {} }, Migrations.run())
    await withAdmin((client) => client.query(`ALTER DATABASE ${building} RENAME TO ${target}`))
  } catch (error) {
    await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`))
    if (!String(error).includes("already exists")) throw error
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

export default async function setup() {
  const key = templateKey()
  await pgliteTemplate(key)
  await postgresTemplate(key).catch((error: unknown) => console.warn(`No PostgreSQL template: ${String(error)}`))
}
