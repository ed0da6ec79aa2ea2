/**
 * The notification bus on both databases: a wait wakes on a notice from another bus (on PostgreSQL
 * another listening connection, as another process would have), a notice between the check and the
 * wait is not missed, a waker is handed only the notices it wants, and on PostgreSQL a listening
 * connection that is killed comes back and wakes every waiter to read again (the catch-up), after
 * which notices flow again.
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Duration, Effect, Fiber, Layer, ManagedRuntime, Option, Schedule, Stream } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { Bus } from "../../src/db/Bus.ts"
import * as Database from "../../src/db/Database.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { eventually, sleep, within } from "../support/time.ts"

const busLayer = (db: TestDatabase) =>
  Bus.Default.pipe(
    Layer.provideMerge(Database.layer()),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(
      Layer.setConfigProvider(
        ConfigProvider.fromMap(
          new Map([["DATA_DIR", db.dataDir], ...(db.databaseUrl ? [["DATABASE_URL", db.databaseUrl] as [string, string]] : [])])
        )
      )
    )
  )

/** A safety poll that never ticks, so only a notice (or a catch-up) can wake a wait. */
const noPoll = Schedule.stop

type BusRuntime = ManagedRuntime.ManagedRuntime<Bus | SqlClient.SqlClient, unknown>

/**
 * Once `to` hears what `from` publishes: on PostgreSQL each bus connects its listener in the
 * background. Probes on a topic no test here reads, until one arrives.
 */
const hearing = async (to: BusRuntime, from: BusRuntime) => {
  const heard = to.runFork(Effect.flatMap(Bus, (bus) => bus.changes("tasks").pipe(Stream.take(1), Stream.runDrain)))
  await eventually(
    async () => {
      await from.runPromise(Effect.flatMap(Bus, (bus) => bus.publish("tasks", "probe")))
      await sleep(50)
      return heard.unsafePoll() !== null
    },
    "the buses' listeners",
    30_000,
    0
  )
}

describe.each(backends)("the notification bus (%s)", (backend) => {
  let db: TestDatabase
  let first: BusRuntime
  let second: BusRuntime
  beforeAll(async () => {
    db = await createTestDatabase(backend)
    first = ManagedRuntime.make(busLayer(db))
    // PGlite is one process: the same bus stands for "another"; PostgreSQL gets a second listener.
    second = backend === "postgres" ? ManagedRuntime.make(busLayer(db)) : first
    await first.runPromise(Effect.void)
    await second.runPromise(Effect.void)
    // The PostgreSQL listeners connect in the background: wait until they hear each other.
    await hearing(first, second)
    await hearing(second, first)
  })
  afterAll(async () => {
    await first?.dispose()
    if (second !== first) await second?.dispose()
    await db?.drop()
  })

  it("wakes a wait on a notice published by another bus, and only for its key", async () => {
    let state = Option.none<string>()
    let checks = 0
    const waiting = first.runFork(
      Effect.flatMap(Bus, (bus) => bus.awaitSome("approval", "wanted", Effect.sync(() => (checks += 1, state)), noPoll))
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(checks).toBe(1)
    await second.runPromise(Effect.flatMap(Bus, (bus) => bus.publish("approval", "other")))
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Another key does not wake it.
    expect(checks).toBe(1)
    state = Option.some("decided")
    await second.runPromise(Effect.flatMap(Bus, (bus) => bus.publish("approval", "wanted")))
    // No poll ticks: the notice alone woke it.
    expect(await within(first.runPromise(Fiber.join(waiting)), "the wait to wake")).toBe("decided")
    expect(checks).toBe(2)
  })

  it("hands a waker the notices of its topics only while it wants them", async () => {
    let wanted = false
    let ready = false
    const woken = first.runFork(
      Effect.scoped(
        Effect.gen(function*() {
          const bus = yield* Bus
          const wake = yield* bus.waker("run_end", { safety: null, wanted: () => wanted })
          yield* Effect.sync(() => void (ready = true))
          yield* wake
          return "woken"
        })
      )
    )
    // A witness hearing every run_end: once it has a notice, the bus has handed it to the waker too.
    const witnessed: Array<string> = []
    const witness = first.runFork(
      Effect.flatMap(Bus, (bus) => bus.changes("run_end").pipe(Stream.runForEach((key) => Effect.sync(() => void witnessed.push(key)))))
    )
    while (!ready) await new Promise((resolve) => setTimeout(resolve, 20))
    // Told while it does not want them: the notice is dropped, not kept for later. (Told until the
    // witness has one: then the waker has been handed it too, and dropped it.)
    await eventually(
      async () => {
        await second.runPromise(Effect.flatMap(Bus, (bus) => bus.publish("run_end", "unwanted")))
        await sleep(20)
        return witnessed.includes("unwanted")
      },
      "an unwanted notice delivered",
      20_000,
      0
    )
    wanted = true
    await sleep(300)
    expect(woken.unsafePoll()).toBeNull()
    // No safety poll: the notice alone wakes it.
    await second.runPromise(Effect.flatMap(Bus, (bus) => bus.publish("run_end", "wanted")))
    expect(await within(first.runPromise(Fiber.join(woken)), "the waker to wake")).toBe("woken")
    await first.runPromise(Fiber.interrupt(witness))
  })

  it("tells of a change from the change's own statement, after it, and not of a change that failed", async () => {
    const received = first.runFork(
      Effect.flatMap(Bus, (bus) => bus.changes("run_end").pipe(Stream.take(1), Stream.runCollect))
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    const sent: Array<boolean> = []
    const change = (fail: boolean) =>
      Effect.flatMap(
        Bus,
        (bus) =>
          bus.publishWith("run_end", fail ? "refused" : "told", (notice) =>
            Effect.flatMap(SqlClient.SqlClient, (sql) => {
              // On PostgreSQL the notice travels in the statement; in-process there is none to send.
              sent.push(notice !== undefined)
              const statement = fail ? sql`SELECT 1 FROM no_such_table` : sql`SELECT 1`
              return notice
                ? sql`WITH changed AS (${statement}) SELECT pg_notify(${notice.channel}, ${notice.payload}) FROM changed`
                : statement
            }))
      )
    await expect(second.runPromise(change(true))).rejects.toThrow()
    await second.runPromise(change(false))
    const got = await first.runPromise(Fiber.join(received).pipe(Effect.timeout(Duration.seconds(5))))
    expect([...got]).toEqual(["told"])
    expect(sent).toEqual(backend === "postgres" ? [true, true] : [false, false])
  })

  it("delivers the keys of a batch, each to its waiter", async () => {
    const keys = Array.from({ length: 500 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`)
    const received = first.runFork(
      Effect.flatMap(Bus, (bus) => bus.changes("run_events").pipe(Stream.take(keys.length), Stream.runCollect))
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    await second.runPromise(Effect.flatMap(Bus, (bus) => bus.publishAll("run_events", keys)))
    const got = await first.runPromise(Fiber.join(received).pipe(Effect.timeout(Duration.seconds(5))))
    expect([...got].sort()).toEqual(keys)
  })

  // PGlite has no listening connection to lose: this one is PostgreSQL's alone (defined, not skipped).
  if (backend === "postgres") {
    it("reconnects a killed listening connection and wakes every waiter to read again", async () => {
      let state = Option.none<string>()
      let checks = 0
      const waiting = first.runFork(
        Effect.flatMap(Bus, (bus) => bus.awaitSome("tool_result", "r1", Effect.sync(() => (checks += 1, state)), noPoll))
      )
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(checks).toBe(1)
      // The answer lands while no connection listens (it is killed first): its notice would be lost.
      const admin = new pg.Client({ connectionString: db.databaseUrl })
      await admin.connect()
      try {
        const killed = await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'cairn-bus:%' AND datname = current_database()"
        )
        expect(killed.rowCount).toBe(2)
        state = Option.some("answered")
        // The catch-up after the reconnect reads it.
        expect(await first.runPromise(Fiber.join(waiting).pipe(Effect.timeout(Duration.seconds(5))))).toBe("answered")
        expect(checks).toBe(2)
        // And notices flow again on the new connections.
        const again = first.runFork(
          Effect.flatMap(Bus, (bus) =>
            bus.awaitSome("tool_result", "r2", Effect.succeed(Option.none<string>()), noPoll).pipe(
              Effect.timeout(Duration.millis(300)),
              Effect.option
            ))
        )
        expect(Option.isNone(await first.runPromise(Fiber.join(again)))).toBe(true)
        let ready = false
        const third = first.runFork(
          Effect.flatMap(
            Bus,
            (bus) => bus.awaitSome("tool_result", "r3", Effect.sync(() => (ready ? Option.some(true) : Option.none())), noPoll)
          )
        )
        await new Promise((resolve) => setTimeout(resolve, 200))
        ready = true
        await second.runPromise(Effect.flatMap(Bus, (bus) => bus.publish("tool_result", "r3")))
        expect(await first.runPromise(Fiber.join(third).pipe(Effect.timeout(Duration.seconds(5))))).toBe(true)
        const listeners = async () =>
          (await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'cairn-bus:%' AND datname = current_database()"
          )).rows[0].n
        await eventually(async () => (await listeners()) === 2, "both listeners back")
      } finally {
        await admin.end()
      }
    })
  }
})
