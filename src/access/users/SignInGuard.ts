/**
 * Password guessing is held back whatever RATE_LIMIT_ENABLED says: sign-in and first-admin setup
 * count failures per guessing source, the client address (`ClientAddress.ts`: behind a proxy named
 * in TRUSTED_PROXIES, the address it forwarded). The first few are free; after them each failure
 * locks the source for twice as long as the last (1 s, 2 s, 4 s, ... at most 15 minutes;
 * SIGNIN_FIRST_LOCK_SECONDS sets the first), and an hour without a failure forgets it. A locked
 * source is answered 429 with Retry-After, before any password hash is computed.
 *
 * The source is locked, not the account: a stranger's guesses at a username never stop its owner,
 * signing in from elsewhere, with the right password (locking the account would hand anyone a way to
 * lock anyone out, and one guess per lock keeps it locked). An IPv6 source is its /64, what one
 * client is usually given, so stepping through its addresses is not a new source each time.
 *
 * An attempt counts as a failure from the moment it starts (a success takes it back), and checking
 * the lock and counting the attempt are one statement on the source's row (`SignInRepo.ts`), shared
 * by every server process: of a burst of parallel guesses, exactly the free few run, however many
 * processes answer it.
 */
import { Config, Effect } from "effect"
import * as net from "node:net"
import { TooManyRequests } from "../../contract/Errors.ts"
import { type LockRules, SignInRepo } from "./SignInRepo.ts"

/** Failures a source may have before the locks begin (SIGNIN_FREE_FAILURES). */
const freeFailuresConfig = Config.integer("SIGNIN_FREE_FAILURES").pipe(
  Config.withDefault(5),
  Config.validate({ message: "Expected a whole number of at least 1", validation: (n) => n >= 1 })
)
const maxLockSeconds = 15 * 60
/** The lock after the last free failure, doubled by each further one (SIGNIN_FIRST_LOCK_SECONDS). */
const firstLockConfig = Config.integer("SIGNIN_FIRST_LOCK_SECONDS").pipe(
  Config.validate({ message: "Expected a whole number of seconds from 1 to 900", validation: (n) => n >= 1 && n <= maxLockSeconds }),
  Config.withDefault(1)
)
const sweepEveryMs = 60_000

/** The first four groups of an IPv6 address (its /64), written out in full. */
const prefix64 = (address: string): string => {
  const [head, tail = ""] = address.toLowerCase().split("::")
  const left = head === "" ? [] : head.split(":")
  const right = address.includes("::") && tail !== "" ? tail.split(":") : []
  const groups = address.includes("::") ? [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right] : left
  return groups.slice(0, 4).map((group) => group.padStart(4, "0")).join(":") + "::/64"
}

/** The source a client address guesses as: an IPv4 address (also when mapped into IPv6), or an IPv6 /64. */
export const guessingSource = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]
  // An IPv6 address with an IPv4 tail other than the mapped form is rare; it stands as it is.
  return net.isIPv6(address) && !address.includes(".") ? prefix64(address) : address
}

export class SignInGuard extends Effect.Service<SignInGuard>()("cairn/SignInGuard", {
  effect: Effect.gen(function*() {
    const repo = yield* SignInRepo
    const rules: LockRules = {
      freeFailures: yield* freeFailuresConfig,
      firstLockSeconds: yield* firstLockConfig,
      maxLockSeconds
    }
    let lastSweep = 0

    /** Drops forgotten sources now and then (once a minute per process, on an attempt). */
    const sweep = Effect.suspend(() => {
      const now = Date.now()
      if (now - lastSweep < sweepEveryMs) return Effect.void
      lastSweep = now
      return repo.sweep
    })

    /**
     * Runs `attempt` unless the client at `address` is locked (429 with the wait). The attempt counts
     * as a failure until it succeeds; a success takes its own count back and lifts the lock it made.
     */
    const guard = <A, E, R>(address: string, attempt: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const source = guessingSource(address)
        yield* sweep
        const met = yield* repo.attempt(source, rules)
        if (met && !met.admitted) {
          return yield* new TooManyRequests({
            detail: "Too many failed attempts; try again later",
            retryAfterSeconds: Math.max(1, met.wait ?? 1)
          })
        }
        const result = yield* attempt
        yield* repo.succeeded(source)
        return result
      })

    return { guard } as const
  }),
  dependencies: [SignInRepo.Default]
}) {}
