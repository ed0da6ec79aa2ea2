/**
 * Leadership across server processes on one PostgreSQL: work that must run exactly once (a mail
 * poller, a scheduler) runs only in the process holding a session-level advisory lock, taken on a
 * connection reserved from the pool for as long as it leads.
 *
 * Takeover bounds (documented in docs/operations.md):
 * - the leader stops or crashes: its connection closes, PostgreSQL drops the lock at once, and a
 *   follower takes it at its next try (`LEADER_RETRY_MS`, default 2 s);
 * - the leader's host or network dies without closing the socket: the leader's connection runs
 *   with `idle_session_timeout` (`LEADER_SESSION_TIMEOUT_MS`, default 15 s) while it pings every
 *   `LEADER_CHECK_MS`, so PostgreSQL ends the silent session and frees the lock within that time;
 * - the leader loses its connection: its ping fails and the work is interrupted before a follower
 *   can have taken over for longer than one check.
 * On PGlite there is one process by construction: the caller always leads.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Config, Data, Duration, Effect, Either, Option, Redacted, Schedule, type Scope } from "effect"
import * as crypto from "node:crypto"
import Pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"
import { DatabaseInfo } from "./Database.ts"

const leadershipConfig = Config.all({
  retryMs: Config.integer("LEADER_RETRY_MS").pipe(Config.withDefault(2000)),
  checkMs: Config.integer("LEADER_CHECK_MS").pipe(Config.withDefault(2000)),
  sessionTimeoutMs: Config.integer("LEADER_SESSION_TIMEOUT_MS").pipe(Config.withDefault(15_000))
})

/** The leader's connection stopped answering: the lock may be gone, so the work must stop. */
export class LeadershipLost extends Data.TaggedError("LeadershipLost")<{ readonly reason: string }> {}

/** A name as the 64-bit key of `pg_try_advisory_lock` (signed, as PostgreSQL's bigint). */
export const lockKey = (name: string): string =>
  crypto.createHash("sha256").update(`cairn:leader:${name}`).digest().readBigInt64BE(0).toString()

/** What the lock needs of a connection: one session for as long as it leads. */
interface LockConnection {
  readonly execute: (text: string, params: ReadonlyArray<unknown>, _: undefined) => Effect.Effect<ReadonlyArray<any>, SqlError>
}

/**
 * A connection of its own on DATABASE_LISTEN_URL: a pooler in transaction mode hands a pooled
 * connection's statements to any server session, which would hold the lock past the leader's end.
 */
const directConnection = (url: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new Pg.Client({ connectionString: url, application_name: "cairn-leader", connectionTimeoutMillis: 5000 })
        // A dropped connection is met by the next ping, which loses leadership.
        client.on("error", () => {})
        await client.connect()
        return client
      },
      catch: (cause) => new SqlError({ cause, message: "Leadership: failed to connect" })
    }),
    (client) => Effect.promise(() => client.end()).pipe(Effect.timeoutOption(1000))
  ).pipe(Effect.map((client): LockConnection => ({
    execute: (text, params) =>
      Effect.tryPromise({
        try: () => client.query(text, [...params]).then((result) => result.rows),
        catch: (cause) => new SqlError({ cause, message: "Leadership: statement failed" })
      })
  })))

export class Leadership extends Effect.Service<Leadership>()("cairn/Leadership", {
  effect: Effect.gen(function*() {
    const config = yield* leadershipConfig
    const sql = yield* SqlClient.SqlClient
    const { databaseListenUrl } = yield* AppConfig
    const reserve: Effect.Effect<LockConnection, SqlError, Scope.Scope> = Option.match(databaseListenUrl, {
      onNone: () => sql.reserve,
      onSome: (url) => directConnection(Redacted.value(url))
    })
    const info = yield* DatabaseInfo
    /** How often a follower tries the lock again. */
    const retryInterval = Duration.millis(config.retryMs)

    /** One attempt: Some(result) after leading, None when another process holds the lock. */
    const attempt = <A, E, R>(key: string, work: Effect.Effect<A, E, R>, onLeading: Effect.Effect<void>) =>
      Effect.scoped(
        Effect.gen(function*() {
          const connection = yield* reserve
          const [row] = yield* connection.execute("SELECT pg_try_advisory_lock($1::bigint) AS locked", [key], undefined)
          if (row?.locked !== true) return { led: false as const }
          yield* Effect.addFinalizer(() =>
            connection.execute("SELECT pg_advisory_unlock($1::bigint)", [key], undefined).pipe(
              Effect.zipRight(connection.execute("RESET idle_session_timeout", [], undefined)),
              Effect.ignore
            )
          )
          // A silent session (host gone) is ended by PostgreSQL itself, which frees the lock.
          yield* connection
            .execute(`SET idle_session_timeout = ${Math.max(1000, Math.floor(config.sessionTimeoutMs))}`, [], undefined)
            .pipe(Effect.ignore)
          const ping = connection.execute("SELECT 1", [], undefined).pipe(
            Effect.timeoutFail({
              duration: Duration.millis(config.checkMs * 2),
              onTimeout: () => new LeadershipLost({ reason: "ping timed out" })
            }),
            Effect.mapError((error) => (error instanceof LeadershipLost ? error : new LeadershipLost({ reason: error.message }))),
            Effect.repeat(Schedule.spaced(Duration.millis(config.checkMs))),
            Effect.zipRight(Effect.never)
          )
          yield* onLeading
          // The work's own failure is its caller's, carried out as a value; only the lock's fail here.
          const result = yield* Effect.raceFirst(Effect.either(work), ping as Effect.Effect<never, LeadershipLost>)
          return { led: true as const, result }
        })
      )

    /**
     * Runs `work` while this process leads under `name`: waits (calling `onFollowing` once per
     * wait) while another process does, and starts over when leadership is lost. Ends with the
     * work's own end.
     */
    const lead = <A, E, R>(
      name: string,
      work: Effect.Effect<A, E, R>,
      hooks: { readonly onFollowing: Effect.Effect<void>; readonly onLeading: Effect.Effect<void> }
    ): Effect.Effect<A, E, R> => {
      if (info.backend === "pglite") return Effect.zipRight(hooks.onLeading, work)
      const key = lockKey(name)
      const loop: Effect.Effect<A, E, R> = attempt(key, work, hooks.onLeading).pipe(
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logWarning(
              error._tag === "LeadershipLost"
                ? `Leadership ${name} lost: ${error.reason}; stopping its work and trying again`
                : `Leadership ${name}: the database did not answer (${error.message}); trying again`
            ),
            { led: false as const }
          )
        ),
        Effect.flatMap((outcome) =>
          outcome.led
            ? Either.match(outcome.result, { onLeft: (e) => Effect.fail(e), onRight: (a) => Effect.succeed(a) })
            : hooks.onFollowing.pipe(Effect.zipRight(Effect.sleep(retryInterval)), Effect.zipRight(Effect.suspend(() => loop)))
        )
      )
      return Effect.suspend(() => loop)
    }

    return { lead, backend: info.backend } as const
  })
}) {}
