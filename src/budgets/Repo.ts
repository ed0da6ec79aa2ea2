/** SQL for budgets and their periods' spend. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { type BudgetDefinition, type Cost, totalStart } from "./Ledger.ts"
import { BudgetAction, BudgetPeriod, BudgetScope } from "./Model.ts"

const definitionFields = {
  id: Schema.String,
  scope: BudgetScope,
  target: Schema.String,
  period: BudgetPeriod,
  limit_usd: Schema.NullOr(Schema.Number),
  limit_tokens: Schema.NullOr(Schema.Number),
  action: BudgetAction,
  warn_at: Schema.Number
}

export const BudgetRow = Schema.Struct({
  ...definitionFields,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type BudgetRow = typeof BudgetRow.Type

const spendFields = {
  spent_usd: Schema.Number,
  spent_tokens: Schema.Number,
  reserved_usd: Schema.Number,
  reserved_tokens: Schema.Number,
  in_flight: Schema.Number,
  warned_at: Schema.NullOr(Schema.DateFromSelf),
  exceeded_at: Schema.NullOr(Schema.DateFromSelf)
}

/** A period's spend with its budget as it is now (a limit changed by another process counts at once). */
export const PeriodRow = Schema.Struct({ ...definitionFields, period_start: Schema.DateFromSelf, ...spendFields })
export type PeriodRow = typeof PeriodRow.Type

/** A budget and its current period's spend (zeros when nothing was spent yet). */
export const StatusRow = Schema.Struct({ ...BudgetRow.fields, ...spendFields })
export type StatusRow = typeof StatusRow.Type

/** One budget's period a call counts in. */
export interface PeriodKey {
  readonly budget_id: string
  readonly period_start: Date
}

/** One call's hold on one budget's period: its row in `budget_holds`, and the process keeping it alive. */
export interface Hold {
  readonly id: string
  readonly owner: string
}

/** The current period of each kind, for the status of every budget in one query. */
export interface CurrentStarts {
  readonly day: Date
  readonly month: Date
}

const budgetColumns =
  "b.id, b.scope, b.target, b.period, b.limit_usd, b.limit_tokens::float8 AS limit_tokens, b.action, b.warn_at, b.created_at, b.updated_at"
const definitionColumns = "b.id, b.scope, b.target, b.period, b.limit_usd, b.limit_tokens::float8 AS limit_tokens, b.action, b.warn_at"
const spendColumns =
  "p.spent_usd, p.spent_tokens::float8 AS spent_tokens, p.reserved_usd, p.reserved_tokens::float8 AS reserved_tokens, p.in_flight, p.warned_at, p.exceeded_at"

export class BudgetsRepo extends Effect.Service<BudgetsRepo>()("cairn/BudgetsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const budgets = decodeRows(BudgetRow)
    const periods = decodeRows(PeriodRow)
    const statuses = decodeRows(StatusRow)

    const spendOf = (key: PeriodKey) =>
      periods(sql`SELECT ${sql.literal(definitionColumns)}, p.period_start, ${sql.literal(spendColumns)}
          FROM budget_periods p JOIN budgets b ON b.id = p.budget_id
         WHERE p.budget_id = ${key.budget_id} AND p.period_start = ${key.period_start}`).pipe(Effect.map(firstRow))

    /** A block budget's room for `cost` in the row being updated: its limits as the caller read them. */
    const fits = (budget: BudgetDefinition, cost: Cost) =>
      budget.action !== "block"
        ? sql`true`
        : sql.and([
          ...(budget.limit_tokens === null ? [] : [sql`p.spent_tokens + p.reserved_tokens + ${cost.tokens} <= ${budget.limit_tokens}`]),
          ...(budget.limit_usd === null ? [] : [sql`p.spent_usd + p.reserved_usd + ${cost.usd} <= ${budget.limit_usd * (1 + 1e-9)}`]),
          sql`true`
        ])

    /**
     * A reservation of `cost` given back, when `count` holds were (a hold a sweep gave back first
     * counts 0): the last call in flight zeroes what is reserved, so float sums leave no residue.
     */
    const released = (cost: Cost, count = sql`1`) =>
      sql`reserved_tokens = CASE WHEN ${count} = 0 THEN p.reserved_tokens WHEN p.in_flight <= 1 THEN 0
                                 ELSE greatest(p.reserved_tokens - ${cost.tokens}, 0) END,
          reserved_usd = CASE WHEN ${count} = 0 THEN p.reserved_usd WHEN p.in_flight <= 1 THEN 0
                              ELSE greatest(p.reserved_usd - ${cost.usd}, 0) END,
          in_flight = greatest(p.in_flight - ${count}, 0)`

    return repository("BudgetsRepo", {
      /** Every definition, in id order: the order a call reserves in (`Budgets.reserve`), so no call sorts them. */
      all: budgets(sql`SELECT ${sql.literal(budgetColumns)} FROM budgets b ORDER BY b.id`),
      find: (id: string) => budgets(sql`SELECT ${sql.literal(budgetColumns)} FROM budgets b WHERE b.id = ${id}`).pipe(Effect.map(firstRow)),
      /** Every budget with its current period's spend (`starts` by period kind). */
      statuses: (starts: CurrentStarts, id?: string) =>
        statuses(sql`SELECT ${sql.literal(budgetColumns)},
               coalesce(p.spent_usd, 0) AS spent_usd, coalesce(p.spent_tokens, 0)::float8 AS spent_tokens,
               coalesce(p.reserved_usd, 0) AS reserved_usd, coalesce(p.reserved_tokens, 0)::float8 AS reserved_tokens,
               coalesce(p.in_flight, 0) AS in_flight, p.warned_at, p.exceeded_at
          FROM budgets b
          LEFT JOIN budget_periods p ON p.budget_id = b.id AND p.period_start = CASE b.period
            WHEN 'day' THEN ${starts.day}::timestamptz WHEN 'month' THEN ${starts.month}::timestamptz ELSE ${totalStart}::timestamptz END
         WHERE ${id === undefined ? sql`true` : sql`b.id = ${id}`}
         ORDER BY b.created_at, b.id`),
      insert: (budget: BudgetDefinition, at: Date) =>
        budgets(sql`INSERT INTO budgets (id, scope, target, period, limit_usd, limit_tokens, action, warn_at, created_at, updated_at)
          VALUES (${budget.id}, ${budget.scope}, ${budget.target}, ${budget.period}, ${budget.limit_usd}, ${budget.limit_tokens},
                  ${budget.action}, ${budget.warn_at}, ${at}, ${at})
          RETURNING id, scope, target, period, limit_usd, limit_tokens::float8 AS limit_tokens, action, warn_at, created_at, updated_at`)
          .pipe(Effect.map((rows) => rows[0]!)),
      update: (budget: BudgetDefinition, at: Date) =>
        budgets(sql`UPDATE budgets SET period = ${budget.period}, limit_usd = ${budget.limit_usd}, limit_tokens = ${budget.limit_tokens},
               action = ${budget.action}, warn_at = ${budget.warn_at}, updated_at = ${at}
         WHERE id = ${budget.id}
         RETURNING id, scope, target, period, limit_usd, limit_tokens::float8 AS limit_tokens, action, warn_at, created_at, updated_at`)
          .pipe(Effect.map(firstRow)),
      remove: (id: string) => sql`DELETE FROM budgets WHERE id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
      /**
       * Reserves `cost` on one budget's period, in one statement: the period's row is made or
       * locked, and the reservation added only where the budget still has room for it, both on
       * the row's latest version. Concurrent calls, here or in another process, are counted one
       * after another, and a connection waits on the lock no longer than its statement. True when
       * held. (A cost that cannot fit even an empty period never gets here: see `Budgets.reserve`.)
       */
      reserve: (budget: BudgetDefinition, start: Date, cost: Cost, hold: Hold) =>
        sql`WITH reserved AS (
              INSERT INTO budget_periods AS p (budget_id, period_start, reserved_tokens, reserved_usd, in_flight)
              SELECT b.id, ${start}, ${cost.tokens}, ${cost.usd}, 1 FROM budgets b WHERE b.id = ${budget.id}
              ON CONFLICT (budget_id, period_start) DO UPDATE
                 SET reserved_tokens = p.reserved_tokens + EXCLUDED.reserved_tokens,
                     reserved_usd = p.reserved_usd + EXCLUDED.reserved_usd,
                     in_flight = p.in_flight + 1
               WHERE ${fits(budget, cost)}
              RETURNING p.budget_id, p.period_start)
            INSERT INTO budget_holds (id, budget_id, period_start, tokens, usd, owner)
            SELECT ${hold.id}::uuid, budget_id, period_start, ${cost.tokens}, ${cost.usd}, ${hold.owner} FROM reserved
            RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
      /** Gives back a reservation of `cost` that a later budget's refusal undid (unless a sweep gave it back first). */
      unreserve: (key: PeriodKey, cost: Cost, holdId: string) =>
        sql`WITH gone AS (DELETE FROM budget_holds WHERE id = ${holdId}::uuid RETURNING id)
            UPDATE budget_periods p
               SET ${released(cost)}
             WHERE p.budget_id = ${key.budget_id} AND p.period_start = ${key.period_start} AND EXISTS (SELECT 1 FROM gone)`.pipe(
          Effect.asVoid
        ),
      /** One period's spend with its budget as it is now; undefined when nothing was reserved there yet or the budget is gone. */
      spend: spendOf,
      /**
       * A call's end on one budget: its reservation given back and what it used added. The last
       * call in flight zeroes what is reserved, so float sums leave no residue.
       */
      settle: (key: PeriodKey, reserved: Cost, used: Cost, holdId: string) =>
        periods(sql`WITH gone AS (DELETE FROM budget_holds WHERE id = ${holdId}::uuid RETURNING id)
          UPDATE budget_periods p
             SET spent_tokens = p.spent_tokens + ${used.tokens}, spent_usd = p.spent_usd + ${used.usd},
                 ${released(reserved, sql`(SELECT count(*)::int FROM gone)`)}
            FROM budgets b
           WHERE b.id = p.budget_id AND p.budget_id = ${key.budget_id} AND p.period_start = ${key.period_start}
          RETURNING ${sql.literal(definitionColumns)}, p.period_start, ${sql.literal(spendColumns)}`).pipe(Effect.map(firstRow)),
      /** Marks the holds of this process (`owner`) as alive. */
      renewHolds: (owner: string) => sql`UPDATE budget_holds SET seen_at = now() WHERE owner = ${owner}`.pipe(Effect.asVoid),
      /**
       * Gives back the reservations of holds not renewed for `staleSeconds` (their process is gone,
       * or has hung past the bound): each period's sums drop by what its lapsed holds reserved.
       * Answers how many holds lapsed.
       */
      sweepHolds: (staleSeconds: number) =>
        sql<{ n: number }>`WITH gone AS (
              DELETE FROM budget_holds WHERE seen_at < now() - make_interval(secs => ${staleSeconds}::float8)
              RETURNING budget_id, period_start, tokens, usd),
            sums AS (SELECT budget_id, period_start, sum(tokens)::float8 AS tokens, sum(usd) AS usd, count(*)::int AS n
                       FROM gone GROUP BY budget_id, period_start),
            swept AS (
              UPDATE budget_periods p
                 SET reserved_tokens = CASE WHEN p.in_flight <= s.n THEN 0 ELSE greatest(p.reserved_tokens - s.tokens, 0) END,
                     reserved_usd = CASE WHEN p.in_flight <= s.n THEN 0 ELSE greatest(p.reserved_usd - s.usd, 0) END,
                     in_flight = greatest(p.in_flight - s.n, 0)
                FROM sums s
               WHERE p.budget_id = s.budget_id AND p.period_start = s.period_start
              RETURNING s.n)
          SELECT coalesce(sum(n), 0)::int AS n FROM swept`.pipe(Effect.map((rows) => rows[0]?.n ?? 0)),
      /** Marks the hook event of a period as fired; true for the one caller that marked it, in any process. */
      claim: (key: PeriodKey, event: "warned_at" | "exceeded_at", at: Date) =>
        sql`UPDATE budget_periods SET ${sql(event)} = ${at}
             WHERE budget_id = ${key.budget_id} AND period_start = ${key.period_start} AND ${sql(event)} IS NULL
            RETURNING budget_id`.pipe(Effect.map((rows) => rows.length > 0))
    })
  })
}) {}
