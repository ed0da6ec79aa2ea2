/** The batch writer: chunks, drops only the records the store refuses, keeps all while the store is away. */
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { makeBatchWriter } from "../../src/db/BatchWriter.ts"

const writerOver = async (store: { up: boolean; rows: Array<string>; statements: Array<number> }, flushMs = 60_000) => {
  const scope = Effect.runSync(Scope.make())
  const writer = await Effect.runPromise(
    Scope.extend(
      makeBatchWriter(
        "test records",
        (batch: ReadonlyArray<string>) =>
          Effect.suspend(() => {
            store.statements.push(batch.length)
            if (!store.up) return Effect.die(new Error("connection refused"))
            if (batch.some((row) => row.includes("\u0000"))) return Effect.die(new Error("invalid byte sequence"))
            store.rows.push(...batch)
            return Effect.void
          }),
        flushMs
      ),
      scope
    )
  )
  return { writer, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

describe("BatchWriter", () => {
  it("writes in chunks, and drops only a record the store refuses", async () => {
    const store = { up: true, rows: [] as Array<string>, statements: [] as Array<number> }
    const { writer, close } = await writerOver(store)
    for (let i = 0; i < 1200; i++) await Effect.runPromise(writer.push(i === 7 ? "bad\u0000" : `row-${i}`))
    await Effect.runPromise(writer.flush)
    expect(store.rows).toHaveLength(1199)
    expect(store.rows).not.toContain("bad\u0000")
    expect(Math.max(...store.statements)).toBeLessThanOrEqual(500)
    await Effect.runPromise(writer.flush)
    expect(store.rows).toHaveLength(1199)
    await close()
  })

  it("keeps every record while the store is away, and writes them when it is back", async () => {
    const store = { up: false, rows: [] as Array<string>, statements: [] as Array<number> }
    const { writer, close } = await writerOver(store)
    for (let i = 0; i < 10; i++) await Effect.runPromise(writer.push(`row-${i}`))
    await Effect.runPromise(writer.flush)
    expect(store.rows).toEqual([])
    store.up = true
    await Effect.runPromise(writer.flush)
    expect(store.rows).toEqual(Array.from({ length: 10 }, (_, i) => `row-${i}`))
    await close()
  })

  it("writes what is pushed after its cadence on its own, and tries a kept batch again until the store is back", async () => {
    const store = { up: true, rows: [] as Array<string>, statements: [] as Array<number> }
    const { writer, close } = await writerOver(store, 40)
    await Effect.runPromise(writer.push("first"))
    await Effect.runPromise(writer.push("second"))
    await new Promise((resolve) => setTimeout(resolve, 200))
    // One statement for both, without a flush asked for.
    expect(store.rows).toEqual(["first", "second"])
    expect(store.statements).toEqual([2])
    store.up = false
    await Effect.runPromise(writer.push("third"))
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Tried again on the cadence with nothing new pushed.
    expect(store.statements.length).toBeGreaterThan(3)
    store.up = true
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(store.rows).toEqual(["first", "second", "third"])
    const settled = store.statements.length
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(store.statements).toHaveLength(settled)
    await close()
  })
})
