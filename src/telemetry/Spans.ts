/**
 * The one way an operation becomes a span. A service answers its methods through
 * `traced("Bots", { get, list })`: the same methods, each Effect it returns (or each Effect value)
 * running in a span named `Bots.get`, `Bots.list`. A repository's methods are made the same way by
 * `repository` (db/Repository.ts), which calls `traced`. A function that is no service's method
 * is `tracedFn("Reseal.pending", fn)` (what `traced` makes of each method), and a single effect is
 * `inSpan(effect, name)`. Methods answering anything else (a stream, a plain value, an Option or an
 * Either) are left as they are. With tracing off (no OTLP endpoint) no span is made.
 * `test/core/tracing.test.ts` holds that no `Effect.fn` or `Effect.withSpan` is used outside this
 * folder.
 */
import { Effect, Either, FiberRef, Option, type Tracer } from "effect"

/** An Effect to run, not an Option or an Either (which are Effects too, but answered as values). */
export const isRunnable = (value: unknown): value is Effect.Effect<unknown, unknown, unknown> =>
  Effect.isEffect(value) && !Option.isOption(value) && !Either.isEither(value)

/**
 * No stack trace is taken: the one `Effect.withSpan` would record is its caller's, which is always
 * `inSpan` here, and taking it costs an `Error` per span.
 */
const plainSpan: Tracer.SpanOptions = { captureStackTrace: false }

/**
 * The effect in a span named `name` (with `options`' attributes) when tracing is on; when it is
 * off, the effect alone. A span under a disabled tracer is still made and ended (about 6 µs each,
 * bench/README.md "Spans"), and a turn passes through dozens (some 75 calls), so the check is worth
 * its one fiber-ref read, made in one runtime step rather than the three of a `FiberRef.get` and a
 * `flatMap`.
 */
export const inSpan = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, options?: Tracer.SpanOptions): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled)
      ? Effect.withSpan(effect, name, options === undefined ? plainSpan : { ...plainSpan, ...options })
      : effect
  )

/** `fn`, each Effect it answers run in a span named `name` (`inSpan`); anything else it answers as it is. */
export const tracedFn = <F extends (...args: Array<any>) => unknown>(name: string, fn: F): F =>
  ((...args: Array<unknown>) => {
    const result = fn(...args)
    return isRunnable(result) ? inSpan(result, name) : result
  }) as F

/** A service's methods, each a span named `<service>.<method>` (a function through `tracedFn`, an Effect value through `inSpan`). */
export const traced = <const M extends object>(service: string, methods: M): M =>
  Object.fromEntries(
    Object.entries(methods).map(([name, method]) => {
      const span = `${service}.${name}`
      if (isRunnable(method)) return [name, inSpan(method, span)]
      if (typeof method === "function") return [name, tracedFn(span, method as (...args: Array<unknown>) => unknown)]
      return [name, method]
    })
  ) as M
