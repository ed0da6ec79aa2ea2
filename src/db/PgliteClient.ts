/**
 * A `SqlClient` over PGlite (PostgreSQL compiled to WASM), the embedded default database.
 *
 * PGlite has one connection, so every statement and every whole transaction takes a single permit:
 * a transaction holds it from BEGIN to COMMIT, and other fibers wait rather than interleave.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { parse, PGlite, protocol } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { Context, Effect, Layer, Stream } from "effect"
import * as v8 from "node:v8"
import type { PgliteWasmTier } from "../config/AppConfig.ts"
import * as Direct from "./Direct.ts"
import { analyzeWhileBusy } from "./PgliteAnalyze.ts"
import { keepFileSizes } from "./PgliteFileSizes.ts"

export interface PgliteOptions {
  /** A directory for the database files, or `memory://` for a throwaway in-memory database. */
  readonly dataDir: string
  /** PostgreSQL's shared_buffers in MB (PGlite's default, 128, is most of its memory). */
  readonly sharedBuffersMb: number
  readonly wasmTier: PgliteWasmTier
}

/**
 * V8 runs WebAssembly through its baseline compiler (Liftoff) and recompiles hot functions with its
 * optimizing one (TurboFan). For PGlite the second tier makes statements about 12% faster but keeps
 * both tiers' code and the compiler's leftovers: about 45 MB more resident memory and 0.7 s more
 * to start (bench/README.md, "PGlite's WebAssembly: the baseline tier alone"). The tier is fixed
 * per module when it is compiled, so the flag is set around PGlite's compile alone; other
 * WebAssembly in the process (the ONNX embedder) keeps V8's default.
 */
const compiledAt = async <A>(tier: PgliteWasmTier, compile: () => Promise<A>): Promise<A> => {
  if (tier === "optimizing") return compile()
  v8.setFlagsFromString("--liftoff-only")
  try {
    return await compile()
  } finally {
    v8.setFlagsFromString("--no-liftoff-only")
  }
}

/**
 * Prepared statements are planned as PostgreSQL plans them by default: for their values for the
 * first five runs, then once (a generic plan) when that costs no more. The plan is costed on the
 * tables' statistics, which PGlite, running no autovacuum, gets from db/PgliteAnalyze.ts. (Before
 * that, every statement was planned for its values each time, `force_custom_plan`, about a third of
 * what PGlite spent on a turn's statements.)
 */
export const planCacheMode = "auto"

const openPglite = ({ dataDir, sharedBuffersMb, wasmTier }: PgliteOptions) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const db = await compiledAt(wasmTier, () =>
          PGlite.create(dataDir, {
            extensions: { vector },
            startParams: [
              ...PGlite.defaultStartParams,
              "-c",
              `shared_buffers=${sharedBuffersMb}MB`,
              "-c",
              `plan_cache_mode=${planCacheMode}`
            ]
          }))
        keepFileSizes(db)
        await db.exec("CREATE EXTENSION IF NOT EXISTS vector")
        return db
      },
      catch: (cause) => new SqlError({ cause, message: `Failed to open the embedded database at ${dataDir}` })
    }),
    (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
  )

/** How many statements stay prepared on the connection; past it, the least recently used is closed. */
const preparedMax = 256

const concatMessages = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/**
 * Statements with parameters, each prepared once on the connection and then run in one call into
 * PGlite. `PGlite.query` parses the statement every time and makes six calls into its WebAssembly
 * for one statement (parse, describe, bind, describe, execute, sync); here a known statement is one
 * call (bind, describe, execute, sync), planned for its values (`planCacheMode`), which costs about
 * 60 % of what `query` does (bench/README.md, "Prepared statements"). The parameters are
 * serialized by their described types with PGlite's own serializers, and the rows parsed by its
 * own parsers, so values go in and come out exactly as through `query`. Callers hold the
 * connection's permit (or a transaction's), so no two calls interleave.
 */
/** A statement prepared on the connection: its name, and the types of its parameters as described. */
interface Prepared {
  readonly name: string
  readonly types: ReadonlyArray<number>
}

export const preparedStatements = (db: PGlite) => {
  const { serialize } = protocol
  const known = new Map<string, Prepared>()
  let made = 0
  const close = (name: string) =>
    db.execProtocol(concatMessages([serialize.close({ type: "S", name }), serialize.sync()]), { syncToFs: false })
  const prepare = async (sql: string): Promise<Prepared> => {
    const name = `cairn_${++made}`
    const { messages } = await db.execProtocol(
      concatMessages([serialize.parse({ name, text: sql }), serialize.describe({ type: "S", name }), serialize.sync()]),
      { syncToFs: false }
    )
    const description = messages.find((message) => message.name === "parameterDescription") as { dataTypeIDs?: Array<number> } | undefined
    const statement = { name, types: description?.dataTypeIDs ?? [] }
    known.set(sql, statement)
    if (known.size > preparedMax) {
      const [oldest, { name: closing }] = known.entries().next().value!
      known.delete(oldest)
      await close(closing)
    }
    return statement
  }
  const execute = async (statement: Prepared, params: ReadonlyArray<unknown>, rowMode?: "array") => {
    const values = params.map((value, index) => {
      if (value === null || value === undefined) return null
      const serializer = db.serializers[statement.types[index]!]
      return serializer ? serializer(value) : String(value)
    })
    // No sync to the file system after it: for a data directory on disk (NODEFS) or in memory that
    // sync does nothing, but it still takes PGlite's file-system mutex, a few promises a statement.
    const { messages } = await db.execProtocol(
      concatMessages([
        serialize.bind({ statement: statement.name, values }),
        serialize.describe({ type: "P" }),
        serialize.execute({}),
        serialize.sync()
      ]),
      { syncToFs: false }
    )
    return parse.parseResults(messages, db.parsers, rowMode ? { rowMode } : undefined)[0]?.rows ?? []
  }
  return async (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") => {
    const held = known.get(sql)
    if (!held) return execute(await prepare(sql), params, rowMode)
    // Most recently used last: the map's order is the eviction order.
    known.delete(sql)
    known.set(sql, held)
    try {
      return await execute(held, params, rowMode)
    } catch (error) {
      if (!Direct.isStalePlan(error)) throw error
      // A migration changed what the statement returns: it is prepared afresh.
      known.delete(sql)
      await close(held.name)
      return execute(await prepare(sql), params, rowMode)
    }
  }
}

const makeConnection = (
  db: PGlite,
  lock: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
  prepared: ReturnType<typeof preparedStatements>
) => {
  const run = (sql: string, params: ReadonlyArray<unknown>) =>
    lock(
      Effect.tryPromise({
        try: async () => {
          if (params.length === 0) {
            // exec speaks the simple protocol, so multi-statement scripts (migrations) work.
            const results = await db.exec(sql)
            return (results.length === 0 ? [] : results[results.length - 1]!.rows) as ReadonlyArray<any>
          }
          return (await prepared(sql, params)) as ReadonlyArray<any>
        },
        catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
      })
    )
  const connection: Connection = {
    execute: (sql, params, transformRows) => transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params),
    executeRaw: (sql, params) => run(sql, params),
    executeValues: (sql, params) =>
      lock(
        Effect.tryPromise({
          try: async () => (await prepared(sql, params, "array")) as any,
          catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
        })
      ),
    executeUnprepared: (sql, params, transformRows) => transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params),
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(
        transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params)
      )
  }
  return connection
}

/** The client and, for the statements a turn makes, the same single connection without the client's wrapping (db/Direct.ts). */
export const make = (options: PgliteOptions) =>
  Effect.gen(function*() {
    const db = yield* openPglite(options)
    const semaphore = yield* Effect.makeSemaphore(1)
    const preparedOnce = preparedStatements(db)
    // Statements with parameters run, for the analyze's check (db/PgliteAnalyze.ts).
    let statementsRun = 0
    const prepared: typeof preparedOnce = (sql, params, rowMode) => {
      statementsRun++
      return preparedOnce(sql, params, rowMode)
    }
    const locked = makeConnection(db, semaphore.withPermits(1), prepared)
    const unlocked = makeConnection(db, (effect) => effect, prepared)
    // A transaction holds the only permit until its scope closes (after COMMIT or ROLLBACK).
    const transactionAcquirer = Effect.as(
      Effect.acquireRelease(semaphore.take(1), () => semaphore.release(1)),
      unlocked
    )
    const client = yield* SqlClient.make({
      acquirer: Effect.succeed(locked),
      transactionAcquirer,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", "pglite"]
      ]
    })
    // Statistics for the planner, as autovacuum would keep them (db/PgliteAnalyze.ts).
    yield* Effect.forkScoped(analyzeWhileBusy(() => statementsRun, (sql) => locked.execute(sql, [], undefined)))
    return Context.make(SqlClient.SqlClient, client).pipe(
      Context.add(Direct.DirectStatements, Direct.make((sql, params) => locked.execute(sql, params, undefined)))
    )
  })

export const layer = (options: PgliteOptions) => Layer.scopedContext(make(options)).pipe(Layer.provide(Reactivity.layer))
