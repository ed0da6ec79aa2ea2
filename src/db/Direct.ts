/**
 * A statement run straight on the driver. `@effect/sql` runs each statement in a span (made even
 * when tracing is off), a scope for its connection (extended with a context swap, an
 * acquire-use-release of two fiber-ref writes) and an interruptible callback: some 66 runtime
 * steps for one driver call, about three quarters of what a statement costs the server above the
 * bare pool (bench/sqlCost.ts). A turn makes six, so its statements (the session, the run's lock,
 * the history, the two messages, the run's end) go through here instead.
 *
 * Outside a transaction and with tracing off, `rows` compiles the statement with the client's own
 * compiler and hands it to the driver: the pool on PostgreSQL (what `@effect/sql-pg` does between
 * transactions), the single connection under its permit on PGlite. Inside a transaction, or with
 * tracing on (so the `sql.execute` span is kept), the statement runs as `@effect/sql` runs it. An
 * interrupted direct statement is not cancelled on the server: these are single-row statements
 * that finish in a millisecond, and `pg_cancel_backend` would race the commit anyway.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Context, Effect, FiberRef } from "effect"

/** The driver's own execution of a compiled statement, outside any transaction. */
export type DriverExecute = (sql: string, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<unknown>, SqlError>

export class DirectStatements extends Context.Tag("cairn/DirectStatements")<
  DirectStatements,
  {
    /** The statement's rows, from the driver when no transaction is open and tracing is off. */
    readonly rows: <A extends object>(statement: Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError>
  }
>() {}

export const make = (execute: DriverExecute): DirectStatements["Type"] => ({
  rows: <A extends object>(statement: Statement<A>) =>
    Effect.withFiberRuntime<ReadonlyArray<A>, SqlError>((fiber) => {
      if (fiber.getFiberRef(FiberRef.currentTracerEnabled)) return statement
      if (Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)._tag === "Some") return statement
      const [sql, params] = statement.compile()
      return execute(sql, params) as Effect.Effect<ReadonlyArray<A>, SqlError>
    })
})

/**
 * PostgreSQL's answer (PGlite's too) to a prepared statement whose result's columns changed type
 * since it was prepared on that connection, by a migration: it holds until the statement is
 * prepared again, which both databases' prepared paths then do (db/Database.ts, db/PgliteClient.ts).
 */
export const isStalePlan = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === "0A000" &&
  String((error as { message?: unknown }).message).includes("cached plan must not change result type")
