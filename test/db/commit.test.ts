/**
 * Relaxed commits (db/Commit.ts) for a statement on its own: the `FROM` item turns
 * `synchronous_commit` off for that statement's transaction (its commit), and the setting goes
 * with it, so the next statement on the same pooled connection commits durably again. On one
 * connection of each database (a pool hands a connection on with whatever it was left with).
 */
import { PGlite } from "@electric-sql/pglite"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relaxedFromItem } from "../../src/db/Commit.ts"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"

/** What a statement sees of the setting while it runs, then what the connection has after it. */
const during = `SELECT current_setting('synchronous_commit') AS setting FROM ${relaxedFromItem}`
const after = "SELECT current_setting('synchronous_commit') AS setting"

describe("a statement committed relaxed on its own", () => {
  let db: TestDatabase
  let client: pg.Client
  beforeAll(async () => {
    db = await createTestDatabase("postgres")
    client = new pg.Client({ connectionString: db.databaseUrl })
    await client.connect()
  })
  afterAll(async () => {
    await client?.end()
    await db?.drop()
  })

  it("commits without waiting for the disk, and leaves the connection as it was (postgres)", async () => {
    expect((await client.query(after)).rows[0].setting).toBe("on")
    expect((await client.query(during)).rows[0].setting).toBe("off")
    expect((await client.query(after)).rows[0].setting).toBe("on")
  })

  it("does the same on PGlite's one connection", async () => {
    const lite = await PGlite.create()
    try {
      const before = (await lite.query<{ setting: string }>(after)).rows[0]!.setting
      expect((await lite.query<{ setting: string }>(during)).rows[0]!.setting).toBe("off")
      expect((await lite.query<{ setting: string }>(after)).rows[0]!.setting).toBe(before)
    } finally {
      await lite.close()
    }
  })
})
