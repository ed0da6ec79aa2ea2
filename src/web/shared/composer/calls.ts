/** Running the typed client's calls from React: a Promise that rejects with the call's own error. */
import { Effect, Either } from "effect"

/** The effect's value, or a rejection with its typed error (not a FiberFailure wrapping it). */
export const runCall = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.either(effect)).then((result) => (Either.isRight(result) ? result.right : Promise.reject(result.left)))

/** A refused or failed call as one readable line: the server's `detail` when it gave one. */
export const describeError = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const { detail, message } = error as { detail?: unknown; message?: unknown }
    if (typeof detail === "string" && detail.length > 0) return detail
    if (typeof message === "string" && message.length > 0) return message
  }
  return String(error)
}
