/**
 * The sign-in guard on the test clock: of a burst of concurrent wrong passwords exactly the free few
 * run, the rest are refused with the wait; the lock doubles with each failure after a lapse; and a
 * burst that arrives more slowly than the lock lasts gets one more attempt through at each lapse
 * (what a busy machine answering the HTTP burst of test/auth/users.test.ts does with the 1 s default).
 */
import { ConfigProvider, Deferred, Effect, Either, Layer, TestClock, TestContext } from "effect"
import { describe, expect, it } from "vitest"
import { guardKeys, SignInGuard } from "../../src/access/users/SignInGuard.ts"
import { TooManyRequests } from "../../src/contract/Errors.ts"

const withGuard = <A, E>(env: Record<string, string>, program: Effect.Effect<A, E, SignInGuard>) =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(
        SignInGuard.Default.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
      ),
      Effect.provide(TestContext.TestContext)
    )
  )

const keys = guardKeys("203.0.113.7", "root")
const wrongPassword = "wrong password" as const

/** How an attempt ended: it ran and failed, or it was refused with a wait of so many seconds. */
const outcome = (result: Either.Either<unknown, unknown>) =>
  Either.isRight(result)
    ? "ran and succeeded"
    : result.left instanceof TooManyRequests
    ? `refused ${result.left.retryAfterSeconds} s`
    : "ran and failed"

describe("SignInGuard", () => {
  it("lets exactly the free failures of a concurrent burst run, and refuses the rest with the wait", async () => {
    const outcomes = await withGuard(
      {},
      Effect.gen(function*() {
        const { guard } = yield* SignInGuard
        let ran = 0
        // Each admitted attempt holds its hash until the whole burst has been checked.
        const release = yield* Deferred.make<void>()
        const attempt = Effect.zipRight(
          Effect.sync(() => void ran++),
          Effect.zipRight(Deferred.await(release), Effect.fail(wrongPassword))
        )
        const burst = yield* Effect.fork(
          Effect.all(Array.from({ length: 30 }, () => Effect.either(guard(keys, attempt))), { concurrency: "unbounded" })
        )
        while (ran < 5) yield* Effect.yieldNow()
        yield* Deferred.succeed(release, undefined)
        const results = (yield* burst.await).pipe((exit) => (exit._tag === "Success" ? exit.value : []))
        return { ran, results: results.map(outcome) }
      })
    )
    expect(outcomes.ran).toBe(5)
    expect(outcomes.results.filter((o) => o === "ran and failed")).toHaveLength(5)
    expect(outcomes.results.filter((o) => o === "refused 1 s")).toHaveLength(25)
  })

  it("locks for the first lock after the free failures, then twice as long after each further one", async () => {
    const outcomes = await withGuard(
      {},
      Effect.gen(function*() {
        const { guard } = yield* SignInGuard
        const attempt = () => Effect.either(guard(keys, Effect.fail(wrongPassword))).pipe(Effect.map(outcome))
        const seen: Array<string> = []
        for (let i = 0; i < 5; i++) seen.push(yield* attempt())
        seen.push(yield* attempt())
        yield* TestClock.adjust("999 millis")
        seen.push(yield* attempt())
        yield* TestClock.adjust("1 millis")
        seen.push(yield* attempt())
        seen.push(yield* attempt())
        return seen
      })
    )
    expect(outcomes).toEqual([
      ...Array.from({ length: 5 }, () => "ran and failed"),
      "refused 1 s",
      "refused 1 s",
      // The lock lapsed: one more runs, and the next lock is twice as long.
      "ran and failed",
      "refused 2 s"
    ])
  })

  it("lets a burst spread over more than the lock through once more at each lapse, and none with a lock that outlasts it", async () => {
    /** Thirty wrong passwords a fifth of a second apart, as a busy server reached the HTTP burst: how many ran. */
    const spread = (env: Record<string, string>) =>
      withGuard(
        env,
        Effect.gen(function*() {
          const { guard } = yield* SignInGuard
          let ran = 0
          for (let i = 0; i < 30; i++) {
            yield* Effect.either(guard(keys, Effect.suspend(() => (ran++, Effect.fail(wrongPassword)))))
            yield* TestClock.adjust("200 millis")
          }
          return ran
        })
      )
    // Six seconds in all: the 1 s lock lapses, then the 2 s one.
    expect(await spread({})).toBe(7)
    expect(await spread({ SIGNIN_FIRST_LOCK_SECONDS: "60" })).toBe(5)
  })

  it("refuses a first lock that is not a whole number of seconds from 1 to 900", async () => {
    for (const value of ["0", "901", "1.5"]) {
      await expect(withGuard({ SIGNIN_FIRST_LOCK_SECONDS: value }, SignInGuard)).rejects.toThrow(/SIGNIN_FIRST_LOCK_SECONDS/)
    }
  })
})
