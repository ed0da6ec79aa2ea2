/** Running the typed client's calls from React, and saying why one failed. */
import { Effect, Either } from "effect"

/** The effect's value, or a rejection with its typed error (not a FiberFailure wrapping it). */
export const runCall = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.either(effect)).then((result) => (Either.isRight(result) ? result.right : Promise.reject(result.left)))

/** A refused or failed call as one readable line: the server's `detail` (a 422's issues joined), else the error's message. */
export const describeError = (error: unknown): string => {
  const { detail, message } = (typeof error === "object" && error !== null ? error : {}) as { detail?: unknown; message?: unknown }
  if (typeof detail === "string" && detail.length > 0) return detail
  if (Array.isArray(detail)) return detail.map((d: { msg?: string }) => d.msg ?? JSON.stringify(d)).join("; ")
  if (typeof message === "string" && message.length > 0) return message
  return String(error)
}
