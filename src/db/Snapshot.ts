/**
 * A value read from the database and trusted for `ttlMs`, so hot paths (every request reads the
 * settings and the provider registry) cost no query. Reads inside the window are one step; after
 * it, one load runs and every concurrent reader waits for that same load instead of each sending
 * the same query. `refresh` reloads at once (after a change made here); a load that started earlier
 * and ends later never overwrites a newer one.
 *
 * Why not Effect's `Cache` (TTL, one lookup per key): its lookup runs in the first reader's fiber,
 * so interrupting that reader (a client that went away) interrupts every reader waiting on the
 * same load, and a slower lookup that started before a refresh can overwrite the refreshed value;
 * both are pinned by `test/db/snapshot.test.ts`. The value is also read on every request, where
 * this check is one clock read and a comparison, in one runtime step.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Deferred, Effect, FiberId, FiberSet, Option, type Scope, Stream } from "effect"
import { Bus } from "./Bus.ts"

export interface Snapshot<A, E> {
  /** The value, reloaded first when older than the window. */
  readonly get: Effect.Effect<A, E>
  /** `f` of the value, as `Effect.map(get, f)` but in one runtime step inside the window (a hot path reads a setting several times a turn). */
  readonly read: <B>(f: (value: A) => B) => Effect.Effect<B, E>
  /** Reloads now and answers the fresh value. */
  readonly refresh: Effect.Effect<A, E>
  /** Drops the value (and any load already under way), so the next read loads. */
  readonly invalidate: Effect.Effect<void>
}

/** A snapshot of `load`; its shared loads run in the caller's scope (interrupted when it closes). */
export const makeSnapshot = <A, E>(load: Effect.Effect<A, E>, ttlMs: number): Effect.Effect<Snapshot<A, E>, never, Scope.Scope> =>
  Effect.map(FiberSet.make(), (loads) => snapshotOf(load, ttlMs, loads))

/**
 * A snapshot every server process on the database keeps in step: `refresh` (after a change made
 * here) also tells the others through the bus (db/Bus.ts), which drop theirs so their next read
 * loads; the window stays as the bound for a notice that was lost.
 */
export const makeSharedSnapshot = <A, E>(
  name: string,
  load: Effect.Effect<A, E>,
  ttlMs: number
): Effect.Effect<Snapshot<A, E>, never, Scope.Scope | Bus> =>
  Effect.gen(function*() {
    const bus = yield* Bus
    const snapshot = yield* makeSnapshot(load, ttlMs)
    yield* Effect.forkScoped(
      bus.changes("invalidate").pipe(
        Stream.filter((key) => key === name || key === "*"),
        Stream.runForEach(() => snapshot.invalidate)
      )
    )
    return { ...snapshot, refresh: Effect.tap(snapshot.refresh, () => bus.publish("invalidate", name)) }
  })

const snapshotOf = <A, E>(load: Effect.Effect<A, E>, ttlMs: number, loads: FiberSet.FiberSet): Snapshot<A, E> => {
  let value: { readonly at: number; readonly value: A } | undefined
  let started = 0
  let applied = 0
  let inflight: Deferred.Deferred<A, E> | undefined

  const loadAndKeep = Effect.flatMap(Clock.currentTimeMillis, (at) => {
    const generation = ++started
    return Effect.tap(load, (loaded) =>
      Effect.sync(() => {
        if (generation > applied) {
          applied = generation
          value = { at, value: loaded }
        }
      }))
  })

  // The shared load runs in its own fiber, so no reader owns it: any reader (the first included)
  // may be interrupted while waiting, and the others still get the result. The fiber belongs to
  // the owner's scope, and is interruptible even when a reader is not.
  const shared: Effect.Effect<A, E> = Effect.suspend(() => {
    if (inflight !== undefined) return Deferred.await(inflight)
    const deferred = Deferred.unsafeMake<A, E>(FiberId.none)
    inflight = deferred
    return Effect.zipRight(
      FiberSet.run(
        loads,
        Effect.interruptible(
          Effect.flatMap(Effect.exit(loadAndKeep), (exit) => {
            inflight = undefined
            return Deferred.done(deferred, exit)
          })
        )
      ),
      Deferred.await(deferred)
    )
  })

  // A reader inside a database transaction loads on its own connection: waiting on the shared
  // load could wait forever where the database has one connection (PGlite), which the shared
  // load needs and the reader's transaction holds.
  const read = <B>(f: (value: A) => B): Effect.Effect<B, E> =>
    Effect.withFiberRuntime<B, E>((fiber) => {
      const now = Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
      if (value !== undefined && now - value.at < ttlMs) return Effect.succeed(f(value.value))
      const inTransaction = Option.isSome(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection))
      return Effect.map(inTransaction ? loadAndKeep : shared, f)
    })
  const get = read((value) => value)

  // A load under way read before the change: its value must not be kept.
  const invalidate = Effect.sync(() => {
    value = undefined
    applied = started
  })

  return { get, read, refresh: loadAndKeep, invalidate }
}
