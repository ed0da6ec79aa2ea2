/**
 * PGlite's file lengths kept in memory (src/db/PgliteFileSizes.ts): on a data directory on disk,
 * what PostgreSQL reads of a relation's length is the file's length on disk as the relation grows,
 * after VACUUM truncates it and after it grows again, and the rows are all there after a restart;
 * a length kept is moved by writes through another descriptor and forgotten on a truncation; and
 * a turn's kind of statements no longer ask the disk for a file's length.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import * as PgliteClient from "../../src/db/PgliteClient.ts"
import { keepFileSizes } from "../../src/db/PgliteFileSizes.ts"
import { scaled } from "../support/time.ts"

const dirs: Array<string> = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const onDisk = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-pglite-sizes-"))
  dirs.push(dir)
  return { dir, layer: PgliteClient.layer({ dataDir: dir, sharedBuffersMb: 16, wasmTier: "baseline" }) }
}

/** What PostgreSQL says the table's main fork holds, and the length of its file on disk. */
const lengths = (dir: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // A checkpoint writes every dirty page out, so the file on disk holds all the relation has.
    yield* sql`CHECKPOINT`
    const [row] = yield* sql<
      { size: number; file: string }
    >`SELECT pg_relation_size('notes')::int AS size, pg_relation_filepath('notes') AS file`
    return { postgres: row!.size, disk: fs.statSync(path.join(dir, row!.file)).size }
  })

describe("PGlite's file lengths", () => {
  it("stay what the disk holds as a table grows, is truncated and grows again, and across a restart", async () => {
    const { dir, layer } = onDisk()
    const seen = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE notes (id serial PRIMARY KEY, body text)`
        const seen: Array<{ postgres: number; disk: number }> = []
        for (let batch = 0; batch < 4; batch++) {
          yield* sql`INSERT INTO notes (body) SELECT repeat('x', 500) FROM generate_series(1, 400)`
          seen.push(yield* lengths(dir))
        }
        // VACUUM gives the empty pages at the end back: the file is truncated.
        yield* sql`DELETE FROM notes`
        yield* sql`VACUUM notes`
        seen.push(yield* lengths(dir))
        yield* sql`INSERT INTO notes (body) SELECT repeat('y', 500) FROM generate_series(1, 300)`
        seen.push(yield* lengths(dir))
        return seen
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    for (const { postgres, disk } of seen) expect(postgres).toBe(disk)
    // It grew, was truncated to nothing, and grew again.
    expect(seen[3]!.postgres).toBeGreaterThan(seen[0]!.postgres)
    expect(seen[4]!.postgres).toBe(0)
    expect(seen[5]!.postgres).toBeGreaterThan(0)

    const after = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM notes WHERE body = repeat('y', 500)`
        yield* sql`INSERT INTO notes (body) SELECT repeat('z', 500) FROM generate_series(1, 300)`
        return { count: count!.n, ...(yield* lengths(dir)) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(after.count).toBe(300)
    expect(after.postgres).toBe(after.disk)
  }, scaled(60_000))

  it("are read from memory: inserts and reads make no fstat call", async () => {
    const { layer } = onDisk()
    const fstat = vi.spyOn(fs, "fstatSync")
    const calls = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE notes (id serial PRIMARY KEY, body text)`
        yield* sql`INSERT INTO notes (body) VALUES ('first')`
        fstat.mockClear()
        for (let n = 0; n < 200; n++) {
          yield* sql`INSERT INTO notes (body) VALUES (${`note ${n}`})`
          yield* sql`SELECT id, body FROM notes WHERE id = ${n + 1}`
        }
        return fstat.mock.calls.length
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    // Each statement seeks the end of what it reads or extends; before, every one of those seeks
    // was an fstat (about 400 here).
    expect(calls).toBeLessThan(20)
  }, scaled(60_000))

  it("follow writes through every descriptor of a file, and truncations", async () => {
    const { dir } = onDisk()
    const db = await PGlite.create(dir)
    try {
      keepFileSizes(db)
      const FS = db.Module.FS as any
      const file = `${PGlite.paths.PGDATA}/cairn-sizes-probe`
      const end = (stream: unknown) => FS.llseek(stream, 0, 2) as number
      const first = FS.open(file, "w+")
      const second = FS.open(file, "r+")
      FS.write(first, new Uint8Array(100), 0, 100, 0)
      expect([end(first), end(second)]).toEqual([100, 100])
      FS.write(second, new Uint8Array(50), 0, 50, 120)
      expect([end(first), end(second)]).toEqual([170, 170])
      FS.ftruncate(first.fd, 10)
      expect(end(second)).toBe(10)
      FS.truncate(file, 4)
      expect(end(first)).toBe(4)
      // A seek relative to the end, as PostgreSQL makes none but the call allows.
      expect(FS.llseek(first, -3, 2)).toBe(1)
      expect(() => FS.llseek(first, -5, 2)).toThrow()
      FS.close(first)
      FS.close(second)
      expect(fs.statSync(path.join(dir, "cairn-sizes-probe")).size).toBe(4)
    } finally {
      await db.close()
    }
  }, scaled(60_000))
})
