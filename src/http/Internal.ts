/**
 * Infrastructure failures (a database error, say) are not part of an endpoint's contract: they
 * become defects, which the server middleware logs in full and answers with a bare 500.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export const orInternal = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
  Effect.catchIf(
    effect,
    (error): error is Extract<E, SqlError> =>
      typeof error === "object" && error !== null && "_tag" in error && (error as { _tag: unknown })._tag === "SqlError",
    (error) => Effect.die(error)
  ) as Effect.Effect<A, Exclude<E, SqlError>, R>
