/**
 * PostgreSQL's autovacuum analyzes a table once enough of it changed, and the planner costs its
 * plans on those statistics: a prepared statement keeps a generic plan (planned once) when that
 * costs no more than planning it for its values each time. PGlite runs no autovacuum, so its
 * tables were never analyzed; a generic plan costed on no statistics sorted a whole session to find
 * its newest messages, and PGlite was made to plan every statement for its values instead, which
 * cost a turn's statements about a third of PGlite's time (bench/README.md, "PGlite's statements
 * planned once").
 *
 * So this does the analyze half of autovacuum: every 10 s, each table that grew by more than a
 * fifth and 8 pages since it was last analyzed (or never was, past 8 pages) is analyzed. The check
 * reads every table's length (some 10 ms), so an idle server makes it only every 5 minutes: it is
 * skipped while fewer than 50 statements ran since the last. Growth is read from the table's
 * length against the pages its last analyze counted (`relpages`), which PGlite keeps; its change
 * counters are not flushed in time to go by. Messages, runs and events only grow, so growth is
 * what makes statistics stale here. A table analyzed is planned again on its new statistics.
 *
 * The analyze holds the only connection, so it is kept short: only the columns an index covers
 * (what the statements filter and join on; a whole `run_events` analyze also sorted a sample of
 * its JSON), on a sample of 3,000 rows (`default_statistics_target` 10, for this analyze only):
 * some 10 ms for a table of 100,000 events where a whole default analyze took 55 ms.
 */
import { Duration, Effect, Schedule, Schema } from "effect"
import { tracedFn } from "../telemetry/Spans.ts"

/** How often the tables' lengths are checked, while statements run. */
const analyzeCadence = Schedule.spaced(Duration.seconds(10))
/** Fewer statements than this since the last check, and the tables cannot have grown by a fifth: skipped. */
const quietStatements = 50
/** Checks skipped in a row at most (a bulk write of few statements is still seen within 5 minutes). */
const quietChecksMax = 30

/** The tables grown past the threshold since their last analyze, as `ANALYZE` names them, with their indexed columns. */
export const grownTablesSql = `SELECT c.oid::regclass::text AS name,
    (SELECT string_agg(DISTINCT quote_ident(a.attname), ', ') FROM pg_index i
     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) WHERE i.indrelid = c.oid) AS columns
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
    AND pg_relation_size(c.oid) / current_setting('block_size')::int > c.relpages * 1.2 + 8`

const GrownTables = Schema.Array(Schema.Struct({ name: Schema.String, columns: Schema.NullOr(Schema.String) }))

/** One statement (one implicit transaction, so `SET LOCAL` holds for it alone) analyzing `tables`. */
export const analyzeSql = (tables: typeof GrownTables.Type) =>
  `SET LOCAL default_statistics_target = 10; ANALYZE ${
    tables.map((table) => (table.columns ? `${table.name} (${table.columns})` : table.name)).join(", ")
  }`

/**
 * Analyzes the grown tables, through `run` (which holds the connection's permit). A failure is
 * logged and the next check tries again.
 */
export const analyzeGrown = tracedFn(
  "PgliteAnalyze.analyzeGrown",
  (run: (sql: string) => Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    Effect.gen(function*() {
      const grown = yield* Schema.decodeUnknown(GrownTables)(yield* run(grownTablesSql))
      if (grown.length === 0) return
      yield* run(analyzeSql(grown))
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Could not analyze the embedded database's tables", cause)))
)

/**
 * Checks every `analyzeCadence`, and analyzes what grew, unless fewer than `quietStatements` ran
 * (by `statementsRun`, a count the connection keeps) since the last check that ran.
 */
export const analyzeWhileBusy = (statementsRun: () => number, run: (sql: string) => Effect.Effect<ReadonlyArray<unknown>, unknown>) => {
  let counted = 0
  let skipped = 0
  const check = Effect.suspend(() => {
    const ran = statementsRun()
    if (ran - counted < quietStatements && ++skipped < quietChecksMax) return Effect.void
    counted = ran
    skipped = 0
    return analyzeGrown(run)
  })
  return Effect.repeat(check, analyzeCadence)
}
