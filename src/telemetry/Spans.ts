/**
 * A service's methods as spans: `traced("Bots", { get, list })` answers the same methods, each
 * Effect it returns (or each Effect value) running in a span named `Bots.get`, `Bots.list`. Methods
 * answering anything else (a stream, a plain value, an Option or an Either) are left as they are. With tracing off (no
 * OTLP endpoint) a span is a no-op.
 */
import { Effect, Either, Option } from "effect"

/** An Effect to run, not an Option or an Either (which are Effects too, but answered as values). */
export const isRunnable = (value: unknown): value is Effect.Effect<unknown, unknown, unknown> =>
  Effect.isEffect(value) && !Option.isOption(value) && !Either.isEither(value)

export const traced = <const M extends object>(service: string, methods: M): M =>
  Object.fromEntries(
    Object.entries(methods).map(([name, method]) => {
      const span = `${service}.${name}`
      if (isRunnable(method)) return [name, Effect.withSpan(method, span)]
      if (typeof method !== "function") return [name, method]
      return [
        name,
        (...args: Array<unknown>) => {
          const result = (method as (...a: Array<unknown>) => unknown)(...args)
          return isRunnable(result) ? Effect.withSpan(result, span) : result
        }
      ]
    })
  ) as M
