/**
 * SQL for the shared rate-limit buckets (`rate_buckets`, PostgreSQL only): a take is one atomic
 * upsert, so every server process behind a load balancer draws from the same bucket.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"

/** What a take left: whether it got a token, and the tokens the bucket holds after it. */
export const TakenRow = Schema.Struct({ granted: Schema.Boolean, tokens: Schema.Number })
export type TakenRow = typeof TakenRow.Type

export class RateLimitRepo extends Effect.Service<RateLimitRepo>()("cairn/RateLimitRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const taken = decodeRows(TakenRow)
    return repository("RateLimitRepo", {
      /**
       * `takeToken` (RateLimit.ts) as one statement on the shared row: refilled for the time since
       * its last take (the database's clock, the same for every process), then one token taken when
       * there is one. A new bucket starts full, less the token taken.
       */
      take: (key: string, limit: number, perMs: number) => {
        const refilled = sql`LEAST(${limit}::float8, b.tokens + EXTRACT(EPOCH FROM (now() - b.at)) * 1000 * ${perMs}::float8)`
        return taken(sql`
          INSERT INTO rate_buckets AS b (key, tokens, at, granted) VALUES (${key}, ${limit - 1}, now(), true)
          ON CONFLICT (key) DO UPDATE SET
            tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
            granted = ${refilled} >= 1,
            at = now()
          RETURNING granted, tokens`).pipe(Effect.map(firstRow))
      },
      /** Drops buckets untouched for a day (any limit refills in less): they hold nothing. */
      sweep: sql`DELETE FROM rate_buckets WHERE at < now() - interval '1 day'`.pipe(Effect.asVoid)
    })
  })
}) {}
