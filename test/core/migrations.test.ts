/** Migrations bring a database made by an older release forward and keep its data. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import { afterEach, describe, expect, it } from "vitest"
import * as Migrations from "../../src/db/Migrations.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"

const ids = fs
  .readdirSync(Migrations.migrationsDir)
  .map((file) => Number(/^(\d+)_/.exec(file)?.[1]))
  .filter((id) => !Number.isNaN(id))
  .sort((a, b) => a - b)

describe.each(backends)("migrations (%s)", (backend) => {
  let db: TestDatabase | undefined
  afterEach(async () => {
    await db?.drop()
  })

  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => withDatabase(db!, effect)

  it("upgrades a database of the first release, keeping its rows", async () => {
    db = await createTestDatabase(backend)
    const first = await run(Migrations.run({ upTo: ids[0]! }))
    expect(first.map(([id]) => id)).toEqual([ids[0]])
    await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO settings (key, value) VALUES ('SYSTEM_PAUSED', 'true'::jsonb)`)
    )
    const rest = await run(Migrations.run())
    expect(rest.map(([id]) => id)).toEqual(ids.slice(1))
    const rows = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ value: unknown }>`SELECT value FROM settings WHERE key = 'SYSTEM_PAUSED'`)
    )
    expect(rows).toEqual([{ value: true }])
    const again = await run(Migrations.run())
    expect(again).toEqual([])
    const applied = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: number }>`SELECT migration_id AS id FROM cairn_migrations ORDER BY 1`)
    )
    expect(applied.map((row) => row.id)).toEqual(ids)
  })

  it("counts the messages of sessions stored before sessions kept their count", async () => {
    db = await createTestDatabase(backend)
    const counting = Number(
      fs.readdirSync(Migrations.migrationsDir).find((file) => file.endsWith("_session_message_count.sql"))!.slice(0, 4)
    )
    await run(Migrations.run({ upTo: counting - 1 }))
    const [busy, empty] = ["8f1d1f0e-0000-4000-8000-000000000001", "8f1d1f0e-0000-4000-8000-000000000002"]
    await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.zipRight(
          sql`INSERT INTO sessions (id, bot_id, client_id) VALUES (${busy}, 'default', 'a'), (${empty}, 'default', 'b')`,
          sql`INSERT INTO messages (id, session_id, role, content)
              SELECT gen_random_uuid(), ${busy}, 'user', 'message ' || n FROM generate_series(1, 3) AS n`
        ))
    )
    await run(Migrations.run())
    const counts = await run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ id: string; message_count: number }>`SELECT id, message_count::int AS message_count FROM sessions ORDER BY client_id`
      )
    )
    expect(counts).toEqual([
      { id: busy, message_count: 3 },
      { id: empty, message_count: 0 }
    ])
  })
})

/**
 * Expand, then contract: while hosts are replaced one at a time the release before runs on the new
 * schema (test/operations/rollingUpgrade.test.ts runs it), so a migration only adds. A statement
 * that takes away or changes what an older release reads or writes belongs to a later release, once
 * no running release uses it, in a migration marked `-- contract:` with the reason.
 */
describe("migrations only expand the schema", () => {
  const breaking: ReadonlyArray<[string, RegExp]> = [
    ["drops a table", /\bDROP\s+TABLE\b/i],
    ["drops a column", /\bDROP\s+COLUMN\b/i],
    ["renames", /\bRENAME\b/i],
    ["changes a column's type", /\bALTER\s+COLUMN\s+\w+\s+(?:SET\s+DATA\s+)?TYPE\b/i],
    ["makes a column required", /\bALTER\s+COLUMN\s+\w+\s+SET\s+NOT\s+NULL\b/i],
    ["adds a required column with no default", /\bADD\s+COLUMN\s+(?:IF\s+NOT\s+EXISTS\s+)?\w+\s+(?![^,;]*\bDEFAULT\b)[^,;]*\bNOT\s+NULL\b/i]
  ]
  it("has no statement that breaks the release before it, unless marked as a contract step", () => {
    const found: Array<string> = []
    for (const file of fs.readdirSync(Migrations.migrationsDir).filter((name) => name.endsWith(".sql"))) {
      const text = fs.readFileSync(`${Migrations.migrationsDir}/${file}`, "utf8")
      if (/^--\s*contract:/m.test(text)) continue
      const statements = text.replace(/--.*$/gm, "")
      for (const [what, pattern] of breaking) if (pattern.test(statements)) found.push(`${file} ${what}`)
    }
    expect(found).toEqual([])
  })
})
