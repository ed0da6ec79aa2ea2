/**
 * Password guessing is held back whatever RATE_LIMIT_ENABLED says: sign-in and first-admin setup
 * count failures per client address and per username. The first few are free; after them each
 * failure locks the key for twice as long as the last (1 s, 2 s, 4 s, ... at most 15 minutes;
 * SIGNIN_FIRST_LOCK_SECONDS sets the first), and an hour without a failure forgets it. An attempt
 * counts as a failure from the moment it starts (a success takes it back), so a burst of parallel
 * guesses is refused before any password hash is computed for most of them: that hash is what
 * makes guessing expensive for the server too.
 *
 * Reading the clock, checking the locks and counting the attempt are one synchronous step, so
 * concurrent attempts are counted one after another: of a burst that arrives within a lock, exactly
 * the free few run. A burst answered more slowly than the lock lasts (a busy machine answering
 * thirty requests takes seconds) gets one more attempt through each time a lock lapses, as any
 * attempt after a lapse does.
 *
 * Per process and in memory, like the request rate limits.
 */
import { Clock, Config, Effect } from "effect"
import { TooManyRequests } from "../../contract/Errors.ts"

/** Failures a key may have before the locks begin (SIGNIN_FREE_FAILURES). */
const freeFailuresConfig = Config.integer("SIGNIN_FREE_FAILURES").pipe(
  Config.withDefault(5),
  Config.validate({ message: "Expected a whole number of at least 1", validation: (n) => n >= 1 })
)
const maxLockMs = 15 * 60_000
/** The lock after the last free failure, doubled by each further one (SIGNIN_FIRST_LOCK_SECONDS). */
const firstLockConfig = Config.integer("SIGNIN_FIRST_LOCK_SECONDS").pipe(
  Config.validate({ message: "Expected a whole number of seconds from 1 to 900", validation: (n) => n >= 1 && n * 1000 <= maxLockMs }),
  Config.withDefault(1)
)
const forgetAfterMs = 60 * 60_000
const sweepEveryMs = 60_000

interface Strikes {
  failures: number
  last: number
  lockedUntil: number
}

/** The keys an attempt counts against: the client address, and the username when there is one. */
export const guardKeys = (address: string, username?: string): ReadonlyArray<string> =>
  username === undefined ? [`ip:${address}`] : [`ip:${address}`, `user:${username.trim().toLowerCase()}`]

export class SignInGuard extends Effect.Service<SignInGuard>()("cairn/SignInGuard", {
  effect: Effect.gen(function*() {
    const freeFailures = yield* freeFailuresConfig
    const firstLockMs = (yield* firstLockConfig) * 1000
    const strikes = new Map<string, Strikes>()
    let lastSweep = 0

    const sweep = (now: number) => {
      lastSweep = now
      for (const [key, entry] of strikes) if (now - entry.last > forgetAfterMs && entry.lockedUntil <= now) strikes.delete(key)
    }

    const fail = (key: string, now: number) => {
      const entry = strikes.get(key)
      const current = entry && now - entry.last <= forgetAfterMs ? entry : { failures: 0, last: now, lockedUntil: 0 }
      current.failures += 1
      current.last = now
      // The last free failure already locks the next attempt out for a moment.
      if (current.failures >= freeFailures) {
        current.lockedUntil = now + Math.min(maxLockMs, firstLockMs * 2 ** (current.failures - freeFailures))
      }
      strikes.set(key, current)
    }

    /**
     * Whether an attempt may run now: if no key is locked, the attempt is counted against every key
     * at once (0); else the wait. One synchronous step, with the clock read in it: no other attempt
     * is checked or counted between this one's check and its count.
     */
    const admit = (keys: ReadonlyArray<string>, clock: Clock.Clock) => {
      const now = clock.unsafeCurrentTimeMillis()
      if (now - lastSweep > sweepEveryMs) sweep(now)
      const wait = Math.max(0, ...keys.map((key) => (strikes.get(key)?.lockedUntil ?? 0) - now))
      if (wait === 0) { for (const key of keys) fail(key, now) }
      return wait
    }

    /**
     * Runs `attempt` unless one of the keys is locked (429 with the wait). The attempt counts as a
     * failure until it succeeds; a success forgets the username's failures (not the address's).
     */
    const guard = <A, E, R>(keys: ReadonlyArray<string>, attempt: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const clock = yield* Effect.clock
        const wait = yield* Effect.sync(() => admit(keys, clock))
        if (wait > 0) {
          return yield* new TooManyRequests({
            detail: "Too many failed attempts; try again later",
            retryAfterSeconds: Math.ceil(wait / 1000)
          })
        }
        const result = yield* attempt
        for (const key of keys) {
          if (key.startsWith("user:")) strikes.delete(key)
          else {
            // The address keeps the failures before this attempt, and no lock of its making.
            const entry = strikes.get(key)
            if (entry) {
              entry.failures = Math.max(0, entry.failures - 1)
              entry.lockedUntil = 0
            }
          }
        }
        return result
      })

    return { guard } as const
  })
}) {}
