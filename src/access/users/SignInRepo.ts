/**
 * SQL for the sign-in lockout (`signin_strikes`): a guessing source's failures, counted and checked
 * in one upsert on its row, so parallel attempts on one server process or several are counted one
 * after another, by the database's clock.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../../db/Repository.ts"

/**
 * What an attempt met: let through (and counted), or refused with the whole seconds the lock has
 * left, by the clock as it answers: `now()` is when its transaction began, which for an attempt that
 * waited on the row is before the lock it meets was set (a wait past the lock's length).
 */
export const StrikeRow = Schema.Struct({ admitted: Schema.Boolean, wait: Schema.NullOr(Schema.Number) })
export type StrikeRow = typeof StrikeRow.Type

/** The rules of the locks, from SignInGuard's settings. */
export interface LockRules {
  readonly freeFailures: number
  readonly firstLockSeconds: number
  readonly maxLockSeconds: number
}

export class SignInRepo extends Effect.Service<SignInRepo>()("cairn/SignInRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const strikes = decodeRows(StrikeRow)
    return repository("SignInRepo", {
      /**
       * An attempt from `source`: refused (nothing counted) while the source is locked; else counted
       * as a failure, and the failures past the free few lock the source for twice as long as the
       * last. An hour without a failure starts the count again.
       */
      attempt: (source: string, rules: LockRules) => {
        const locked = sql`COALESCE(s.locked_until > now(), false)`
        const failures = sql`CASE WHEN s.last_failure < now() - interval '1 hour' THEN 1 ELSE s.failures + 1 END`
        const lockFor = (count: Statement.Fragment) =>
          sql`CASE WHEN ${count} >= ${rules.freeFailures}::int THEN now() + make_interval(secs => LEAST(${rules.maxLockSeconds}::float8,
            ${rules.firstLockSeconds}::float8 * power(2::float8, LEAST(${count} - ${rules.freeFailures}::int, 20)))) END`
        return strikes(sql`
          INSERT INTO signin_strikes AS s (source, failures, last_failure, locked_until, admitted)
          VALUES (${source}, 1, now(), ${lockFor(sql`1`)}, true)
          ON CONFLICT (source) DO UPDATE SET
            failures = CASE WHEN ${locked} THEN s.failures ELSE ${failures} END,
            last_failure = CASE WHEN ${locked} THEN s.last_failure ELSE now() END,
            locked_until = CASE WHEN ${locked} THEN s.locked_until ELSE ${lockFor(failures)} END,
            admitted = NOT ${locked}
          RETURNING admitted, CEIL(EXTRACT(EPOCH FROM (locked_until - clock_timestamp())))::int AS wait`).pipe(Effect.map(firstRow))
      },
      /** A success from `source`: its own attempt no longer counts, and no lock is left of its making. */
      succeeded: (source: string) =>
        sql`UPDATE signin_strikes SET failures = GREATEST(0, failures - 1), locked_until = NULL WHERE source = ${source}`.pipe(
          Effect.asVoid
        ),
      /** Drops sources an hour without a failure and not locked: they count as new ones. */
      sweep: sql`DELETE FROM signin_strikes WHERE last_failure < now() - interval '1 hour'
        AND (locked_until IS NULL OR locked_until < now())`.pipe(Effect.asVoid)
    })
  })
}) {}
