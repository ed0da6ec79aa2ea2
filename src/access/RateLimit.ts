/**
 * Inbound rate limits (opt-in): a token bucket per caller. On PostgreSQL the buckets are rows
 * (`rate_buckets`), taken from atomically by any server process, so a limit holds across all the
 * processes behind a load balancer; on the embedded database (one process) they live in memory,
 * reset on restart as the spec says. RATE_LIMIT_DEFAULT applies to every API route, RATE_LIMIT_CHAT
 * additionally to the routes annotated `ChatRateLimited` (read from their catalogue entry). The
 * three values are read from the runtime settings on each request (cached there), so a change
 * through the admin settings applies without a restart; a bucket is keyed by its rate, so a new
 * rate starts with a full bucket.
 */
import { Clock, Effect, Either } from "effect"
import type { CatalogueEntry } from "../auth/Catalogue.ts"
import { parseRate, type RateExpression } from "../config/Rate.ts"
import { TooManyRequests } from "../contract/Errors.ts"
import { DatabaseInfo } from "../db/Database.ts"
import { RateLimitChat, RateLimitDefault, RateLimitEnabled } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { traced } from "../telemetry/Spans.ts"
import { RateLimitRepo } from "./RateLimitRepo.ts"

interface Bucket {
  tokens: number
  at: number
}

const sweepEveryMs = 60_000

/** Takes one token from a bucket; answers 0 when allowed, or the seconds until a token is back. */
export const takeToken = (bucket: Bucket, rate: RateExpression, now: number): number => {
  const perMs = rate.limit / rate.periodMs
  bucket.tokens = Math.min(rate.limit, bucket.tokens + (now - bucket.at) * perMs)
  bucket.at = now
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1
    return 0
  }
  return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000))
}

export class RateLimiter extends Effect.Service<RateLimiter>()("cairn/RateLimiter", {
  effect: Effect.gen(function*() {
    const settings = yield* Settings
    const repo = yield* RateLimitRepo
    const shared = (yield* DatabaseInfo).backend === "postgres"
    const buckets = new Map<string, { bucket: Bucket; rate: RateExpression }>()
    const parsed = new Map<string, RateExpression>()
    let lastSweep = 0

    const rateOf = (value: unknown): RateExpression | undefined => {
      if (typeof value !== "string") return undefined
      let rate = parsed.get(value)
      if (!rate) {
        const result = parseRate(value)
        if (Either.isLeft(result)) return undefined
        rate = result.right
        parsed.set(value, rate)
      }
      return rate
    }

    /** Drops buckets that have refilled completely: they hold nothing a new bucket would not. */
    const sweep = (now: number) => {
      lastSweep = now
      for (const [key, { bucket, rate }] of buckets) {
        if (bucket.tokens + ((now - bucket.at) * rate.limit) / rate.periodMs >= rate.limit) buckets.delete(key)
      }
    }

    const takeLocal = (key: string, rate: RateExpression, now: number) => {
      let entry = buckets.get(key)
      if (!entry) {
        entry = { bucket: { tokens: rate.limit, at: now }, rate }
        buckets.set(key, entry)
      }
      return takeToken(entry.bucket, rate, now)
    }

    /** A take from the shared row (the repository's one statement); the seconds to wait as `takeToken` answers them. */
    const takeShared = (key: string, rate: RateExpression) => {
      const perMs = rate.limit / rate.periodMs
      return Effect.map(
        repo.take(key, rate.limit, perMs),
        (row) => !row || row.granted ? 0 : Math.max(1, Math.ceil((1 - row.tokens) / perMs / 1000))
      )
    }

    const takeFrom = (name: string, rate: RateExpression, subject: string, now: number): Effect.Effect<number> => {
      const key = `${name}|${rate.text}|${subject}`
      return shared ? takeShared(key, rate) : Effect.sync(() => takeLocal(key, rate, now))
    }

    /**
     * Counts one request of `subject` against its default bucket and, when asked, its chat bucket
     * (the chat bucket only once the default one let it through); answers the seconds to wait, 0 when
     * it may go on.
     */
    const take = (subject: string, buckets: { readonly default: boolean; readonly chat: boolean }) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (now - lastSweep > sweepEveryMs) {
          sweep(now)
          if (shared) yield* repo.sweep
        }
        let wait = 0
        if (buckets.default) {
          const defaultRate = rateOf(yield* settings.get(RateLimitDefault))
          wait = defaultRate ? yield* takeFrom("default", defaultRate, subject, now) : 0
        }
        if (wait === 0 && buckets.chat) {
          const chatRate = rateOf(yield* settings.get(RateLimitChat))
          wait = chatRate ? yield* takeFrom("chat", chatRate, subject, now) : 0
        }
        return wait
      })

    /** Runs `limited` when the limits are on: off (the default), one cached read. */
    const whenEnabled = (limited: Effect.Effect<void, TooManyRequests>) =>
      Effect.flatMap(settings.get(RateLimitEnabled), (enabled) => (enabled ? limited : Effect.void))

    /** Counts one request of `subject` on the route of `entry`; fails with 429 when over a limit. */
    const check = (subject: string, entry: CatalogueEntry | undefined): Effect.Effect<void, TooManyRequests> =>
      whenEnabled(
        Effect.flatMap(take(subject, { default: true, chat: entry?.chatRateLimited === true }), (wait) =>
          wait > 0 ? new TooManyRequests({ detail: "Too many requests", retryAfterSeconds: wait }) : Effect.void)
      )

    /**
     * Counts one chat turn started inside a request the middleware has already counted (an MCP
     * `chat_with_bot` call on `/mcp`): RATE_LIMIT_CHAT alone, as `/chat` would also be held to it.
     */
    const checkChat = (subject: string): Effect.Effect<void, TooManyRequests> =>
      whenEnabled(
        Effect.flatMap(take(subject, { default: false, chat: true }), (wait) =>
          // Said in the detail too: inside MCP there is no Retry-After header to carry it.
          wait > 0 ? new TooManyRequests({ detail: `Too many chat requests; retry in ${wait} s`, retryAfterSeconds: wait }) : Effect.void)
      )

    return traced("RateLimit", { check, checkChat } as const)
  }),
  dependencies: [Settings.Default, RateLimitRepo.Default]
}) {}
