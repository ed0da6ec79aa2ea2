/**
 * Budgets: spend caps on LLM calls. Every chat call (providers/Llm.ts) reserves its worst case on
 * each budget that applies before it is made, and settles to what it used after; a block budget the
 * worst case does not fit refuses the call (`BudgetExceeded`, a 429 until the period ends). The
 * definitions are a snapshot every process keeps in step (db/Snapshot.ts), so a call no budget
 * applies to costs no query; the spend is in the database, counted under row locks, so the cap
 * holds across processes. `budget_warning` and `budget_exceeded` fire once per period.
 *
 * Each reservation is also a hold (`budget_holds`) that this process renews while the call lasts;
 * a hold not renewed for `holdStaleSeconds` (a process killed mid-call, or hung) is given back by
 * whichever process sweeps next, so a dead process's worst case is reserved for a bounded time,
 * not until the period ends.
 */
import { Clock, Config, DateTime, Duration, Effect, Schedule } from "effect"
import * as crypto from "node:crypto"
import * as os from "node:os"
import { TooManyRequests, ValidationError } from "../contract/Errors.ts"
import { Bus } from "../db/Bus.ts"
import { makeSharedSnapshot } from "../db/Snapshot.ts"
import { Hooks } from "../hooks/Hooks.ts"
import { traced } from "../telemetry/Spans.ts"
import { BudgetExceeded, BudgetNotFound } from "./Errors.ts"
import {
  applies,
  type BudgetDefinition,
  type BudgetSubject,
  type Cost,
  leftOf,
  periodOf,
  refusalDetail,
  usedShare,
  wouldPass
} from "./Ledger.ts"
import { Budget, BudgetStatus, type CreateBudget, type UpdateBudget } from "./Model.ts"
import { type BudgetRow, BudgetsRepo, type PeriodKey, type PeriodRow, type StatusRow } from "./Repo.ts"

export const budgetsConfig = Config.all({
  /** The zone whose midnights and first days of the month start the periods (IANA name). */
  timezone: Config.string("BUDGET_TIMEZONE").pipe(
    Config.withDefault("UTC"),
    Config.validate({
      message: "Expected an IANA time zone such as Europe/Oslo",
      validation: (zone) => DateTime.zoneMakeNamed(zone)._tag === "Some"
    })
  )
})

/** How long a process trusts its copy of the definitions when no change notice reached it. */
const definitionsTtlMs = 30_000

/** A hold not renewed this long is given back: its process is gone (as a run's heartbeat lapses, runs/Liveness.ts). */
export const holdStaleSeconds = 30
/** How often this process renews its holds and sweeps lapsed ones: well within `holdStaleSeconds`. */
const holdRenewal = Schedule.spaced(Duration.seconds(5))

/** A `total` budget never resets: a refused caller is told to come back in a day (when someone may have raised it). */
const totalRetrySeconds = 24 * 3600

/** A call's hold on its budgets, given back with what it used by `settle` (only the first call counts). */
export interface Held {
  readonly settle: (used: Cost) => Effect.Effect<void>
}

const nothingHeld: Held = { settle: () => Effect.void }

const nothingSpent = { spent_usd: 0, spent_tokens: 0, reserved_usd: 0, reserved_tokens: 0 }

const toBudget = (row: BudgetRow) =>
  new Budget({
    id: row.id,
    scope: row.scope,
    target: row.scope === "global" ? null : row.target,
    period: row.period,
    limit_usd: row.limit_usd,
    limit_tokens: row.limit_tokens,
    action: row.action,
    warn_at: row.warn_at,
    created_at: row.created_at,
    updated_at: row.updated_at
  })

export class Budgets extends Effect.Service<Budgets>()("cairn/Budgets", {
  scoped: Effect.gen(function*() {
    const repo = yield* BudgetsRepo
    const hooks = yield* Hooks
    const config = yield* budgetsConfig
    const zone = DateTime.zoneUnsafeMakeNamed(config.timezone)
    const definitions = yield* makeSharedSnapshot("budgets", repo.all, definitionsTtlMs)
    // Names this process on its holds; only renewal, not this, keeps a hold.
    const owner = `${os.hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
    /** Holds this process has open: renewal costs a statement only while there are some. */
    let holding = 0

    // Without budgets there is nothing to hold or sweep (deleting a budget deletes its holds).
    const keepHolds = Effect.flatMap(definitions.read((rows) => rows.length), (budgets) =>
      budgets === 0
        ? Effect.void
        : Effect.zipRight(
          holding > 0 ? repo.renewHolds(owner) : Effect.void,
          Effect.flatMap(repo.sweepHolds(holdStaleSeconds), (lapsed) =>
            lapsed > 0
              ? Effect.logWarning(`Gave back ${lapsed} budget reservation(s) of calls whose server process stopped renewing them`)
              : Effect.void)
        ))
    yield* Effect.forkScoped(
      keepHolds.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Renewing or sweeping budget holds failed", cause)),
        Effect.repeat(holdRenewal)
      )
    )

    const statusOf = (row: StatusRow, now: number) => {
      const period = periodOf(row.period, now, zone)
      const used = usedShare(row, row)
      return new BudgetStatus({
        ...toBudget(row),
        period_start: row.period === "total" ? null : period.start,
        period_end: period.end,
        spent_usd: row.spent_usd,
        spent_tokens: row.spent_tokens,
        reserved_usd: row.reserved_usd,
        reserved_tokens: row.reserved_tokens,
        in_flight: row.in_flight,
        left_usd: leftOf(row.limit_usd, row.spent_usd, row.reserved_usd),
        left_tokens: leftOf(row.limit_tokens, row.spent_tokens, row.reserved_tokens),
        used,
        state: used >= 1 ? "exceeded" : used >= row.warn_at ? "warning" : "ok"
      })
    }

    const currentStarts = (now: number) => ({ day: periodOf("day", now, zone).start, month: periodOf("month", now, zone).start })

    const list = Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => Effect.map(repo.statuses(currentStarts(now)), (rows) => rows.map((row) => statusOf(row, now)))
    )

    const get = (id: string) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) =>
          Effect.flatMap(repo.statuses(currentStarts(now), id), (rows) =>
            rows[0] ? Effect.succeed(statusOf(rows[0], now)) : Effect.fail(notFound(id)))
      )

    const notFound = (id: string) => new BudgetNotFound({ detail: `No budget with id ${id}` })

    const create = (body: CreateBudget) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const row = yield* repo.insert({
          id: crypto.randomUUID(),
          scope: body.scope,
          target: body.target ?? "",
          period: body.period,
          limit_usd: body.limit_usd,
          limit_tokens: body.limit_tokens,
          action: body.action,
          warn_at: body.warn_at
        }, new Date(now))
        yield* definitions.refresh
        return toBudget(row)
      })

    const update = (id: string, patch: UpdateBudget) =>
      Effect.gen(function*() {
        const current = yield* repo.find(id)
        if (!current) return yield* notFound(id)
        const next: BudgetDefinition = {
          ...current,
          period: patch.period ?? current.period,
          limit_usd: patch.limit_usd === undefined ? current.limit_usd : patch.limit_usd,
          limit_tokens: patch.limit_tokens === undefined ? current.limit_tokens : patch.limit_tokens,
          action: patch.action ?? current.action,
          warn_at: patch.warn_at ?? current.warn_at
        }
        if (next.limit_usd === null && next.limit_tokens === null) {
          return yield* ValidationError.single(["body"], "A budget keeps limit_usd, limit_tokens or both", "missing_limit")
        }
        const row = yield* repo.update(next, new Date(yield* Clock.currentTimeMillis))
        if (!row) return yield* notFound(id)
        yield* definitions.refresh
        return toBudget(row)
      })

    const remove = (id: string) =>
      Effect.gen(function*() {
        if (!(yield* repo.remove(id))) return yield* notFound(id)
        yield* definitions.refresh
      })

    /** The budgets a call for `subject` counts against: from the snapshot, no query. */
    const applying = (subject: BudgetSubject, blockOnly = false) =>
      definitions.read((rows) => rows.filter((row) => (!blockOnly || row.action === "block") && applies(row, subject)))

    /** Fires `event` for the period unless it already fired there (in any process). */
    const fireOnce = (event: "budget_warning" | "budget_exceeded", row: PeriodRow, now: number) =>
      Effect.flatMap(
        repo.claim(
          { budget_id: row.id, period_start: row.period_start },
          event === "budget_warning" ? "warned_at" : "exceeded_at",
          new Date(now)
        ),
        (claimed) =>
          claimed
            ? hooks.fire(event, {
              bot_id: row.scope === "bot" ? row.target : null,
              session_id: null,
              channel_id: row.scope === "channel" ? row.target : null,
              client_id: null,
              correlation_id: null,
              extra: {
                budget_id: row.id,
                scope: row.scope,
                target: row.scope === "global" ? null : row.target,
                period: row.period,
                period_start: row.period === "total" ? null : row.period_start.toISOString(),
                action: row.action,
                limit_usd: row.limit_usd,
                limit_tokens: row.limit_tokens,
                spent_usd: row.spent_usd,
                spent_tokens: row.spent_tokens,
                used: usedShare(row, row)
              }
            })
            : Effect.void
      )

    /** The events a period's spend has reached and that have not fired there yet. */
    const announce = (rows: ReadonlyArray<PeriodRow>, now: number) =>
      Effect.forEach(rows, (row) => {
        const used = usedShare(row, row)
        return Effect.zipRight(
          used >= row.warn_at && row.warned_at === null ? fireOnce("budget_warning", row, now) : Effect.void,
          used >= 1 && row.exceeded_at === null ? fireOnce("budget_exceeded", row, now) : Effect.void
        )
      }, { discard: true })

    const refused = (row: PeriodRow, limit: "tokens" | "usd", cost: Cost, now: number) => {
      const end = periodOf(row.period, now, zone).end
      return Effect.zipRight(
        row.exceeded_at === null ? fireOnce("budget_exceeded", row, now) : Effect.void,
        Effect.fail(
          new BudgetExceeded({
            detail: refusalDetail(row, row, cost, limit, end),
            budgetId: row.id,
            retryAfterSeconds: end === null ? totalRetrySeconds : Math.max(1, Math.ceil((end.getTime() - now) / 1000))
          })
        )
      )
    }

    /**
     * Holds `worstCase` (evaluated only when a budget applies) on every budget that applies to
     * `subject`, or on none: fails with `BudgetExceeded` naming the first block budget it does
     * not fit, after giving back what it held on the budgets before that one.
     */
    const reserve = (subject: BudgetSubject, worstCase: Effect.Effect<Cost>): Effect.Effect<Held, BudgetExceeded> =>
      Effect.flatMap(applying(subject), (budgets) => {
        if (budgets.length === 0) return Effect.succeed(nothingHeld)
        return Effect.gen(function*() {
          const cost = yield* worstCase
          const now = yield* Clock.currentTimeMillis
          // One period start per kind for the call: budgets of one kind share it.
          const starts = new Map<BudgetDefinition["period"], Date>()
          const startOf = (period: BudgetDefinition["period"]) => {
            let start = starts.get(period)
            if (!start) starts.set(period, start = periodOf(period, now, zone).start)
            return start
          }
          const held: Array<PeriodKey & { readonly hold: string }> = []
          const giveBack = Effect.forEach(held, (done) => repo.unreserve(done, cost, done.hold), { discard: true })
          // In id order (the snapshot's), so concurrent calls lock the periods in one order.
          for (const budget of budgets) {
            const key = { budget_id: budget.id, period_start: startOf(budget.period) }
            // A worst case past the limit itself never fits: no statement needed to say so.
            const fitsAtAll = budget.action !== "block" || wouldPass(budget, nothingSpent, cost) === null
            const hold = crypto.randomUUID()
            if (fitsAtAll && (yield* repo.reserve(budget, key.period_start, cost, { id: hold, owner }))) {
              held.push({ ...key, hold })
              holding++
              continue
            }
            const row = yield* repo.spend(key)
            // Deleted since the snapshot was read: it no longer applies.
            if (fitsAtAll && row === undefined) continue
            yield* giveBack
            holding -= held.length
            const current = row ??
              { ...budget, ...nothingSpent, period_start: key.period_start, warned_at: null, exceeded_at: null, in_flight: 0 }
            const limit = wouldPass(current, current, cost) ?? (budget.limit_tokens !== null ? "tokens" : "usd")
            return yield* refused(current, limit, cost, now)
          }
          if (held.length === 0) return nothingHeld
          let settled = false
          return {
            settle: (used: Cost) =>
              Effect.suspend(() => {
                if (settled) return Effect.void
                settled = true
                holding -= held.length
                return Effect.forEach(held, (key) =>
                  Effect.flatMap(repo.settle(key, cost, used, key.hold), (row) =>
                    row === undefined ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (at) =>
                      announce([row], at))), { discard: true })
              })
          } satisfies Held
        })
      })

    /**
     * Before a run starts (its response may be a stream that cannot turn into a 429 later): a
     * block budget of the caller with nothing left refuses it now, as the 429 a call would get.
     */
    const admit = (subject: BudgetSubject): Effect.Effect<void, TooManyRequests> =>
      Effect.flatMap(applying(subject, true), (budgets) => {
        if (budgets.length === 0) return Effect.void
        return Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* repo.statuses(currentStarts(now))
          for (const row of rows) {
            if (!budgets.some((budget) => budget.id === row.id)) continue
            const limit = leftOf(row.limit_tokens, row.spent_tokens, row.reserved_tokens) === 0
              ? "tokens" as const
              : leftOf(row.limit_usd, row.spent_usd, row.reserved_usd) === 0
              ? "usd" as const
              : null
            if (limit !== null) {
              const period = periodOf(row.period, now, zone).start
              return yield* refused({ ...row, period_start: period }, limit, { tokens: 0, usd: 0 }, now)
            }
          }
        }).pipe(Effect.mapError((error) => new TooManyRequests({ detail: error.detail, retryAfterSeconds: error.retryAfterSeconds })))
      })

    return traced("Budgets", { list, get, create, update, remove, reserve, admit } as const)
  }),
  dependencies: [BudgetsRepo.Default, Hooks.Default, Bus.Default]
}) {}
