/**
 * The cached snapshot behind the settings and the provider registry: one load per window, one
 * load for any number of concurrent readers, and no stale value winning over a newer one; on
 * PGlite's single connection, a reader inside a transaction is not held by a load waiting for it.
 */
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Exit, Fiber, Scope, TestClock, TestContext } from "effect"
import { describe, expect, it } from "vitest"
import { makeSnapshot as makeScopedSnapshot } from "../../src/db/Snapshot.ts"
import { createTestDatabase, withDatabase } from "../support/database.ts"
import { within } from "../support/time.ts"

/** A snapshot whose loads run in a scope of the test's own (open until the process ends). */
const makeSnapshot = <A, E>(load: Effect.Effect<A, E>, ttlMs: number) =>
  Effect.runSync(Scope.extend(makeScopedSnapshot(load, ttlMs), Effect.runSync(Scope.make())))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("makeSnapshot", () => {
  it("loads once per window and again after it", async () => {
    let loads = 0
    const snapshot = makeSnapshot(Effect.sync(() => ++loads), 50)
    // On the test clock: the window is what it says, however busy the machine.
    const values = await Effect.runPromise(
      Effect.gen(function*() {
        const first = yield* snapshot.get
        yield* TestClock.adjust("49 millis")
        const within = yield* snapshot.get
        yield* TestClock.adjust("1 millis")
        return [first, within, yield* snapshot.get]
      }).pipe(Effect.provide(TestContext.TestContext))
    )
    expect(values).toEqual([1, 1, 2])
  })

  it("sends one load for many concurrent readers of an expired value", async () => {
    let loads = 0
    const snapshot = makeSnapshot(
      Effect.sync(() => ++loads).pipe(Effect.delay("20 millis")),
      1_000
    )
    const values = await Effect.runPromise(Effect.all(Array.from({ length: 25 }, () => snapshot.get), { concurrency: "unbounded" }))
    expect(values).toEqual(Array.from({ length: 25 }, () => 1))
    expect(loads).toBe(1)
  })

  it("refreshes at once, and a slower load that started earlier does not overwrite the newer value", async () => {
    let version = 0
    const gates: Array<Deferred.Deferred<void>> = []
    const snapshot = makeSnapshot(
      Effect.gen(function*() {
        const mine = ++version
        const gate = yield* Deferred.make<void>()
        gates.push(gate)
        yield* Deferred.await(gate)
        return mine
      }),
      60_000
    )
    const older = Effect.runFork(snapshot.get) // load 1, held
    await sleep(10)
    const newer = Effect.runFork(snapshot.refresh) // load 2, held
    await sleep(10)
    await Effect.runPromise(Deferred.succeed(gates[1]!, undefined)) // the newer ends first
    expect(await Effect.runPromise(Fiber.join(newer))).toBe(2)
    await Effect.runPromise(Deferred.succeed(gates[0]!, undefined))
    expect(await Effect.runPromise(Fiber.join(older))).toBe(1) // its reader gets what it waited for
    expect(await Effect.runPromise(snapshot.get)).toBe(2) // but the kept value stays the newer one
  })

  it("fails the readers of a failed load, and tries again on the next read", async () => {
    let calls = 0
    const snapshot = makeSnapshot(
      Effect.suspend(() => (++calls === 1 ? Effect.fail("database down" as const) : Effect.succeed("ok"))),
      60_000
    )
    const first = await Effect.runPromiseExit(snapshot.get)
    expect(Exit.isFailure(first)).toBe(true)
    expect(await Effect.runPromise(snapshot.get)).toBe("ok")
    expect(calls).toBe(2)
  })

  it("lets the reader that started a load go at once, and still gives the others its result", async () => {
    let loads = 0
    // The load ends only when the test opens its gate: the starter must let go while it is shut.
    const gate = Effect.runSync(Deferred.make<void>())
    const snapshot = makeSnapshot(Effect.zipRight(Deferred.await(gate), Effect.sync(() => ++loads)), 60_000)
    const starter = Effect.runFork(snapshot.get)
    await sleep(5)
    const waiter = Effect.runFork(snapshot.get)
    await sleep(5)
    const exit = await within(Effect.runPromise(Fiber.interrupt(starter)), "the starter to let go while its load still runs")
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(loads).toBe(0) // not held until the load ends: it has not ended
    await Effect.runPromise(Deferred.succeed(gate, undefined))
    expect(await Effect.runPromise(Fiber.join(waiter))).toBe(1)
    expect(loads).toBe(1)
    expect(await Effect.runPromise(snapshot.get)).toBe(1) // kept for the window
  })

  it("stops a load in flight when the scope it was made in closes", async () => {
    const scope = Effect.runSync(Scope.make())
    let interrupted = false
    const hanging = Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true))))
    const snapshot = Effect.runSync(Scope.extend(makeScopedSnapshot(hanging, 60_000), scope))
    const reader = Effect.runFork(snapshot.get)
    await sleep(20)
    expect(interrupted).toBe(false)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    expect(interrupted).toBe(true)
    await Effect.runPromise(Fiber.interrupt(reader))
  })
})

describe("makeSnapshot on PGlite's one connection", () => {
  it("answers a reader inside a transaction while a shared load waits for that transaction's connection", async () => {
    const db = await createTestDatabase("pglite")
    try {
      const outcome = await withDatabase(
        db,
        Effect.scoped(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          let loads = 0
          const snapshot = yield* makeScopedSnapshot(Effect.map(sql`SELECT 1 AS one`, () => ++loads), 60_000)
          const inTransaction = yield* Deferred.make<void>()
          // A reader outside the transaction (forked before it) starts the shared load, which
          // waits for the connection the transaction holds ...
          const outside = yield* Effect.fork(Effect.zipRight(Deferred.await(inTransaction), snapshot.get))
          return yield* sql.withTransaction(
            Effect.gen(function*() {
              yield* Deferred.succeed(inTransaction, undefined)
              yield* Effect.sleep("50 millis")
              // ... and a reader inside it must not wait on that load.
              const inside = yield* snapshot.get
              return inside
            })
          ).pipe(
            Effect.flatMap((inside) => Effect.map(Fiber.join(outside), (after) => ({ inside, after }))),
            Effect.timeout("5 seconds")
          )
        }))
      )
      expect(outcome.inside).toBeGreaterThanOrEqual(1)
      expect(outcome.after).toBeGreaterThanOrEqual(1)
    } finally {
      await db.drop()
    }
  })
})
