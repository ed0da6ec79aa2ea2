/**
 * Batches inserted from one JSON parameter (src/db/JsonRows.ts): the trace spans and the LLM usage
 * records. One statement text whatever the batch's size (so it stays prepared); every value back as
 * it went in, on both databases; text PostgreSQL refuses (NUL, a lone surrogate), anywhere in a
 * row, made storable instead of failing the batch.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { jsonRowsInsert, rowsJson } from "../../src/db/JsonRows.ts"
import * as Migrations from "../../src/db/Migrations.ts"
import { LogsRepo, type SpanRecord } from "../../src/logs/Repo.ts"
import { UsageRepo } from "../../src/usage/Repo.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"
import { scaled } from "../support/time.ts"

describe("rows as one JSON parameter", () => {
  it("strips NUL and replaces lone surrogates in every string, nested ones too, and leaves pairs alone", () => {
    const json = rowsJson([{ a: "x\u0000y", b: { c: ["\ud800z", "w\udc00"], d: "😀" }, e: 1, f: null, g: new Date(0) }])
    expect(JSON.parse(json)).toEqual([{ a: "xy", b: { c: ["\ufffdz", "w\ufffd"], d: "😀" }, e: 1, f: null, g: "1970-01-01T00:00:00.000Z" }])
  })
})

describe.each(backends)("batches from one JSON parameter (%s)", (backend) => {
  let db: TestDatabase | undefined
  afterEach(async () => {
    await db?.drop()
    db = undefined
  })

  const span = (correlationId: string, at: number, overrides: Partial<SpanRecord> = {}): SpanRecord => ({
    id: randomUUID(),
    correlationId,
    parentId: null,
    kind: "llm",
    name: "chat fake-model",
    botId: "default",
    sessionId: randomUUID(),
    startedAt: new Date(Date.UTC(2026, 10, 28, 4, 0, at, 123)),
    durationMs: 12.6,
    status: "ok",
    error: null,
    attributes: { model: "fake-model", tokens: { prompt: 3, completion: 5 }, tools: ["a", "b"] },
    ...overrides
  })

  it("stores spans and usage records of any batch size exactly, a repeated span once, refused text made storable", async () => {
    db = await createTestDatabase(backend)
    const correlationId = randomUUID()
    const turn = span(correlationId, 0, { kind: "turn", name: "turn\u0000 default", parentId: null })
    const batch = [
      turn,
      span(correlationId, 1, {
        parentId: turn.id,
        error: "bad\u0000 \ud800 thing",
        status: "error",
        attributes: { note: "x\u0000y", nested: ["\udc00"] }
      }),
      span(correlationId, 2, { parentId: turn.id, kind: "tool", name: "search", botId: null, sessionId: null })
    ]
    const seen = await withDatabase(
      db,
      Effect.gen(function*() {
        yield* Migrations.run()
        const sql = yield* SqlClient.SqlClient
        // One statement text, with one parameter, whatever the batch's size.
        const insert = jsonRowsInsert("llm_usage", ["id", "model"], " ON CONFLICT DO NOTHING")
        const compiled = [1, 2, 40].map((size) =>
          insert(sql, Array.from({ length: size }, (_, i) => ({ id: randomUUID(), model: `m${i}` }))).compile()
        )
        const logs = yield* LogsRepo
        const usage = yield* UsageRepo
        yield* logs.insertMany(batch.slice(0, 1))
        // The first again with two more: it stays once.
        yield* logs.insertMany(batch)
        const at = new Date("2026-11-28T04:00:00.000Z")
        const record = {
          at,
          source: "chat",
          principalKind: "key",
          principalId: "static",
          botId: "default",
          sessionId: null,
          providerId: "openai",
          model: "fake-model",
          promptTokens: 3,
          completionTokens: 5,
          totalTokens: 8,
          costUsd: 0.000125,
          durationMs: 51,
          outcome: "ok" as const,
          errorKind: null
        }
        yield* usage.insertMany([record])
        yield* usage.insertMany([
          { ...record, costUsd: null, audioSeconds: 2.5, outcome: "error", errorKind: "timeout" },
          { ...record, promptTokens: 1, completionTokens: 1, totalTokens: 2 }
        ])
        const usageRows = yield* sql<
          {
            model: string
            total_tokens: number
            cost_usd: number | null
            audio_seconds: number
            error_kind: string | null
            at: Date
            session_id: string | null
          }
        >`
          SELECT model, total_tokens, cost_usd, audio_seconds, error_kind, at, session_id FROM llm_usage ORDER BY total_tokens DESC, error_kind NULLS FIRST`
        return { spans: yield* logs.trace(correlationId), usageRows, compiled }
      }).pipe(Effect.provide([LogsRepo.Default, UsageRepo.Default]))
    )
    expect(new Set(seen.compiled.map(([text]) => text)).size).toBe(1)
    expect(seen.compiled.map(([, params]) => params.length)).toEqual([1, 1, 1])
    expect(seen.compiled[0]![0]).toContain("json_populate_recordset(NULL::llm_usage, $1::json) ON CONFLICT DO NOTHING")
    expect(seen.spans).toEqual([
      {
        id: turn.id,
        correlation_id: correlationId,
        parent_id: null,
        kind: "turn",
        name: "turn default",
        bot_id: "default",
        session_id: turn.sessionId,
        started_at: turn.startedAt,
        duration_ms: 13,
        status: "ok",
        error: null,
        attributes: turn.attributes
      },
      expect.objectContaining({
        id: batch[1]!.id,
        parent_id: turn.id,
        error: "bad \ufffd thing",
        status: "error",
        attributes: { note: "xy", nested: ["\ufffd"] }
      }),
      expect.objectContaining({
        id: batch[2]!.id,
        kind: "tool",
        name: "search",
        bot_id: null,
        session_id: null,
        started_at: batch[2]!.startedAt
      })
    ])
    expect(seen.usageRows).toEqual([
      {
        model: "fake-model",
        total_tokens: 8,
        cost_usd: 0.000125,
        audio_seconds: 0,
        error_kind: null,
        at: new Date("2026-11-28T04:00:00.000Z"),
        session_id: null
      },
      {
        model: "fake-model",
        total_tokens: 8,
        cost_usd: null,
        audio_seconds: 2.5,
        error_kind: "timeout",
        at: new Date("2026-11-28T04:00:00.000Z"),
        session_id: null
      },
      {
        model: "fake-model",
        total_tokens: 2,
        cost_usd: 0.000125,
        audio_seconds: 0,
        error_kind: null,
        at: new Date("2026-11-28T04:00:00.000Z"),
        session_id: null
      }
    ])
  }, scaled(60_000))
})
