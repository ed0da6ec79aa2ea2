/**
 * Fresh databases for tests: a new PGlite directory, or a new database on the PostgreSQL server
 * named by TEST_DATABASE_URL (default: the local server). A missing PostgreSQL fails the test; it
 * never skips it.
 */
import type { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import * as AppConfig from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import type { DirectStatements } from "../../src/db/Direct.ts"
import { scratchRoot } from "./scratch.ts"
import { pgliteTemplateDir, postgresTemplateName, templateKey } from "./template.ts"

export type Backend = "pglite" | "postgres"
export const backends: ReadonlyArray<Backend> = ["pglite", "postgres"]

export const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

export interface TestDatabase {
  readonly backend: Backend
  /** DATABASE_URL for the server; undefined for PGlite. */
  readonly databaseUrl: string | undefined
  /** DATA_DIR for the server (PGlite keeps its files beneath it). */
  readonly dataDir: string
  readonly drop: () => Promise<void>
}

export const withAdmin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: adminUrl })
  try {
    await client.connect()
  } catch (cause) {
    throw new Error(
      `PostgreSQL is required for the postgres backend tests and is not reachable at ${adminUrl} ` +
        `(set TEST_DATABASE_URL, or start it: pg_ctlcluster --skip-systemctl-redirect 15 main start): ${String(cause)}`,
      { cause }
    )
  }
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** A new folder for a test's files: a database's data directory, or what the test writes (scratch.ts says where). */
export const tempDir = (prefix = "cairn-test-") => fs.mkdtempSync(path.join(scratchRoot, prefix))

/**
 * A fresh database. `migrated` starts it as a copy of the suite's migrated template (template.ts)
 * when there is one, as a server's first start would leave it; otherwise it is empty.
 */
export const createTestDatabase = async (backend: Backend, options: { readonly migrated?: boolean } = {}): Promise<TestDatabase> => {
  const dataDir = tempDir()
  const key = options.migrated ? templateKey() : undefined
  if (backend === "pglite") {
    if (key !== undefined && fs.existsSync(pgliteTemplateDir(key))) fs.cpSync(pgliteTemplateDir(key), dataDir, { recursive: true })
    return {
      backend,
      databaseUrl: undefined,
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
  const name = `cairn_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await withAdmin(async (client) => {
    const template = key === undefined ? undefined : postgresTemplateName(key)
    const found = template !== undefined && (await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [template])).rowCount! > 0
    await client.query(found ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`)
  })
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    backend,
    databaseUrl: url.toString(),
    dataDir,
    drop: async () => {
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** Runs an effect on a test database directly, with no server (migrations as the test chooses). */
export const withDatabase = <A, E>(db: TestDatabase, effect: Effect.Effect<A, E, SqlClient.SqlClient | DirectStatements>) =>
  Effect.runPromise(
    Effect.scoped(effect).pipe(
      Effect.provide(Database.layer().pipe(Layer.provide(AppConfig.layer))),
      Effect.withConfigProvider(
        ConfigProvider.fromMap(
          new Map([["DATA_DIR", db.dataDir], ...(db.databaseUrl ? [["DATABASE_URL", db.databaseUrl] as [string, string]] : [])])
        )
      )
    )
  )
