/**
 * The cadence of a write-behind queue (a run's events, LLM usage, trace spans): `write` runs
 * `spacing` after the first `wake()` since it last ran, so writes made close together go in one
 * statement and an idle server does not wake on a clock for nothing. A `write` that answers true
 * left work behind (a batch kept for the next try) and runs again after `spacing`.
 */
import { type Duration, Effect, type Scope } from "effect"

export interface WriteBehind {
  /** Something waits to be written; cheap and synchronous, for a caller on the hot path. */
  readonly wake: () => void
}

export const writeBehind = <R>(
  spacing: Duration.Duration,
  write: Effect.Effect<boolean, never, R>
): Effect.Effect<WriteBehind, never, Scope.Scope | R> =>
  Effect.gen(function*() {
    const due = yield* Effect.makeLatch(false)
    yield* due.await.pipe(
      Effect.zipRight(Effect.sleep(spacing)),
      // Closed before the write looks, so a wake during the write brings one more round.
      Effect.zipRight(due.close),
      Effect.zipRight(write),
      Effect.flatMap((again) => (again ? due.open : Effect.void)),
      Effect.forever,
      Effect.forkScoped
    )
    return { wake: () => due.unsafeOpen() }
  })
