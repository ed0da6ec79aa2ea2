/**
 * What storing a message answers (src/sessions/Repo.ts, `StoredMessage`), which the history window
 * extends itself by (History.ts): the message's seq, the session's count and summary after it, and
 * the newest seq before it. On both databases and through both drivers, stored on its own and
 * carried in another statement (a run's lock, gated on it), as JSON each driver hands over.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { withParts } from "../../src/db/Commit.ts"
import { DirectStatements } from "../../src/db/Direct.ts"
import * as Migrations from "../../src/db/Migrations.ts"
import { SessionsRepo, type StoredMessage } from "../../src/sessions/Repo.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"
import { scaled } from "../support/time.ts"

describe.each(backends)("what storing a message answers (%s)", (backend) => {
  let db: TestDatabase | undefined
  afterEach(async () => {
    await db?.drop()
    db = undefined
  })

  it("answers the seq, the count and summary after it and the newest seq before it, alone and carried", async () => {
    db = await createTestDatabase(backend)
    const seen = await withDatabase(
      db,
      Effect.gen(function*() {
        yield* Migrations.run()
        const sql = yield* SqlClient.SqlClient
        const { rows } = yield* DirectStatements
        const repo = yield* SessionsRepo
        const session = randomUUID()
        yield* sql`INSERT INTO sessions (id, bot_id, client_id) VALUES (${session}, 'default', 'stored-test')`
        const first = yield* repo.append(session, { role: "user", content: "one" })
        const second = yield* repo.append(session, { role: "assistant", content: "two" })
        yield* sql`UPDATE sessions SET summary = 'so far', summary_through = ${second.stored!.seq} WHERE id = ${session}`

        // Carried in a statement whose gate answered a row, then in one whose gate answered none.
        const told: Array<StoredMessage | null> = []
        const carried = (gateOpen: boolean) => {
          const writes = repo.appendWrites(session, { role: "user", content: "three" }, (stored) => void told.push(stored), "gate")
          const gate = gateOpen ? sql`SELECT 1 AS open` : sql`SELECT 1 AS open WHERE false`
          return Effect.map(
            rows(sql`WITH gate AS (${gate}), ${withParts(sql, writes.parts)} SELECT ${writes.report!.value} AS report`),
            (found) => writes.report!.take((found[0] as { report: unknown }).report)
          )
        }
        yield* carried(true)
        yield* carried(false)
        const count = (yield* sql<{ n: number }>`SELECT message_count::int AS n FROM sessions WHERE id = ${session}`)[0]!.n
        return { first: first.stored, second: second.stored, told, count }
      }).pipe(Effect.provide(SessionsRepo.Default))
    )
    expect(seen.first).toEqual({ seq: expect.any(Number), total: 1, through: 0, summary: null, before: 0 })
    expect(seen.second).toEqual({ seq: seen.first!.seq + 1, total: 2, through: 0, summary: null, before: seen.first!.seq })
    expect(seen.told).toEqual([{
      seq: seen.second!.seq + 1,
      total: 3,
      through: seen.second!.seq,
      summary: "so far",
      before: seen.second!.seq
    }, null])
    // The shut gate stored nothing, and its writer was told so.
    expect(seen.count).toBe(3)
  }, scaled(60_000))
})
