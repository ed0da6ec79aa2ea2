/** The embedded database opens and answers on either of V8's WebAssembly tiers (PGLITE_WASM_TIER). */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { pgliteWasmTiers } from "../../src/config/AppConfig.ts"
import * as PgliteClient from "../../src/db/PgliteClient.ts"

describe("PgliteClient", () => {
  for (const wasmTier of pgliteWasmTiers) {
    it(`opens and answers compiled for the ${wasmTier} tier`, async () => {
      const rows = await Effect.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE notes (id serial PRIMARY KEY, body text, embedding vector(3))`
          yield* sql`INSERT INTO notes (body, embedding) VALUES ('first', '[1,0,0]'), ('second', '[0,1,0]')`
          return yield* sql<{ body: string }>`SELECT body FROM notes ORDER BY embedding <-> '[0,0.9,0]' LIMIT 1`
        }).pipe(Effect.provide(PgliteClient.layer({ dataDir: "memory://", sharedBuffersMb: 16, wasmTier })), Effect.scoped)
      )
      expect(rows).toEqual([{ body: "second" }])
    }, 60_000)
  }
})
