/**
 * A service for a fast test, from only the members the test uses (the Effect http-server
 * template's `makeTestLayer`): any other member, touched, dies naming itself, so a test never
 * passes on a member it did not mean to call.
 */
import { Context, Effect, Layer } from "effect"

export const makeTestLayer = <I, S extends object>(tag: Context.Tag<I, S>) => (service: Partial<S>): Layer.Layer<I> =>
  Layer.succeed(
    tag,
    new Proxy(service as S, {
      get: (target, property) =>
        property in target
          ? target[property as keyof S]
          : typeof property === "string" && property !== "then"
          ? Effect.dieMessage(`${tag.key}.${property} is not part of this test's ${tag.key}`)
          : undefined
    })
  )
