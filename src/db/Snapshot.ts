/**
 * A value read from the database and trusted for `ttlMs`, so hot paths (every request reads the
 * settings and the provider registry) cost no query. Reads inside the window are one step; after
 * it, one reader reloads and concurrent readers wait for that same load instead of each sending the
 * same query. `refresh` reloads at once (after a change made here); a load that started earlier
 * and ends later never overwrites a newer one.
 */
import { Deferred, Effect, FiberId } from "effect"

export interface Snapshot<A, E> {
  /** The value, reloaded first when older than the window. */
  readonly get: Effect.Effect<A, E>
  /** Reloads now and answers the fresh value. */
  readonly refresh: Effect.Effect<A, E>
}

export const makeSnapshot = <A, E>(load: Effect.Effect<A, E>, ttlMs: number): Snapshot<A, E> => {
  let value: { readonly at: number; readonly value: A } | undefined
  let started = 0
  let applied = 0
  let inflight: Deferred.Deferred<A, E> | undefined

  const loadAndKeep = Effect.suspend(() => {
    const generation = ++started
    const at = Date.now()
    return Effect.tap(load, (loaded) =>
      Effect.sync(() => {
        if (generation > applied) {
          applied = generation
          value = { at, value: loaded }
        }
      })
    )
  })

  // The shared load is uninterruptible: readers waiting on it must not fail because the reader
  // that started it went away. Waiting stays interruptible.
  const shared: Effect.Effect<A, E> = Effect.uninterruptibleMask((restore) =>
    Effect.suspend(() => {
      if (inflight !== undefined) return restore(Deferred.await(inflight))
      const deferred = Deferred.unsafeMake<A, E>(FiberId.none)
      inflight = deferred
      return Effect.onExit(loadAndKeep, (exit) => {
        inflight = undefined
        return Deferred.done(deferred, exit)
      })
    })
  )

  const get = Effect.suspend(() => (value !== undefined && Date.now() - value.at < ttlMs ? Effect.succeed(value.value) : shared))

  return { get, refresh: loadAndKeep }
}
