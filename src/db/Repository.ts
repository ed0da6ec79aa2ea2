/**
 * What makes a repository: its methods answer only what the query means. A database failure (or a
 * row that does not decode) is no endpoint's contract, so it becomes a defect here, which the HTTP
 * layer logs and answers with a bare 500; callers never handle `SqlError`. Each call is a span named
 * `<Repository>.<method>` when tracing is on: the methods are `traced` (telemetry/Spans.ts).
 */
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { isRunnable, traced } from "../telemetry/Spans.ts"

type Defected<M> = {
  readonly [K in keyof M]: M[K] extends (...args: infer Args) => Effect.Effect<infer A, infer _E, infer R>
    ? (...args: Args) => Effect.Effect<A, never, R>
    : M[K] extends Effect.Effect<infer A, infer _E, infer R> ? Effect.Effect<A, never, R>
    : M[K]
}

/** A repository method, its database failures made defects. */
const defected = (method: unknown): unknown => {
  if (isRunnable(method)) return Effect.orDie(method)
  if (typeof method !== "function") return method
  return (...args: Array<unknown>) => {
    const result = (method as (...a: Array<unknown>) => unknown)(...args)
    return isRunnable(result) ? Effect.orDie(result) : result
  }
}

/** The repository's methods, each failure a defect and each call a span (`traced`). */
export const repository = <const M extends Record<string, unknown>>(name: string, methods: M): Defected<M> =>
  traced(name, Object.fromEntries(Object.entries(methods).map(([key, method]) => [key, defected(method)]))) as Defected<M>

const isSqlError = (error: unknown): error is SqlError =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SqlError"

/**
 * A transaction over repository calls: a failure to begin or commit is a defect like any other
 * database failure; the caller's own errors pass through (and roll the transaction back).
 */
export const transactions =
  (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
    Effect.catchIf(sql.withTransaction(effect), isSqlError, Effect.die) as Effect.Effect<A, Exclude<E, SqlError>, R>

/**
 * A query's rows checked against the row's schema (`query.pipe(decodeRows(SessionRow))`). A row
 * that does not match is a defect inside the repository, like a failed query: the schema says what
 * the code may rely on, and a column that changed type fails loudly instead of flowing on as a
 * cast. Row schemas describe what both drivers return (jsonb parsed, timestamptz as `Date`).
 */
export const decodeRows = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = rowsDecoder(schema)
  return <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) => Effect.flatMap(query, (rows) => decode(rows))
}

/**
 * One decoder per row schema. Most repository methods call `decodeRows` on each call, and each
 * `Schema.Array` is a new schema class whose array parser is built afresh: a turn's statements
 * made theirs every time (some 20 KB of a turn's allocation).
 */
const decoders = new WeakMap<Schema.Schema.Any, (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<any>, ParseError>>()
const rowsDecoder = <A, I>(schema: Schema.Schema<A, I, never>) => {
  let decode = decoders.get(schema)
  if (decode === undefined) {
    decode = Schema.decodeUnknown(Schema.Array(schema))
    decoders.set(schema, decode)
  }
  return decode as (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, ParseError>
}

/** Rows that are only an id (`RETURNING id`, a list of ids). */
export const IdRow = Schema.Struct({ id: Schema.String })

/** A count: `SELECT count(*)::int AS n`. */
export const CountRow = Schema.Struct({ n: Schema.Number })

/** The first row, or undefined: for queries of one row by key. */
export const firstRow = <A>(rows: ReadonlyArray<A>): A | undefined => rows[0]
