/**
 * A service's methods as spans: `traced("Bots", { get, list })` answers the same methods, each
 * Effect it returns (or each Effect value) running in a span named `Bots.get`, `Bots.list`. Methods
 * answering anything else (a stream, a plain value, an Option or an Either) are left as they are. With tracing off (no
 * OTLP endpoint) no span is made.
 */
import { Effect, Either, FiberRef, Option } from "effect"

/** An Effect to run, not an Option or an Either (which are Effects too, but answered as values). */
export const isRunnable = (value: unknown): value is Effect.Effect<unknown, unknown, unknown> =>
  Effect.isEffect(value) && !Option.isOption(value) && !Either.isEither(value)

/**
 * The effect in a span named `name` when tracing is on; when it is off, the effect alone. A span
 * under a disabled tracer is still made and ended (about 6 µs each, bench/README.md "Spans"), and a
 * turn passes through dozens (some 75 calls), so the check is worth its one fiber-ref read, made in
 * one runtime step rather than the three of a `FiberRef.get` and a `flatMap`.
 */
export const inSpan = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => (fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(effect, name) : effect))

export const traced = <const M extends object>(service: string, methods: M): M =>
  Object.fromEntries(
    Object.entries(methods).map(([name, method]) => {
      const span = `${service}.${name}`
      if (isRunnable(method)) return [name, inSpan(method, span)]
      if (typeof method !== "function") return [name, method]
      return [
        name,
        (...args: Array<unknown>) => {
          const result = (method as (...a: Array<unknown>) => unknown)(...args)
          return isRunnable(result) ? inSpan(result, span) : result
        }
      ]
    })
  ) as M
