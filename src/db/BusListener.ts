/**
 * The bus's listening side on PostgreSQL: one connection of the process's own (outside the pool)
 * that LISTENs on the bus's channel, reconnected when it drops. Notices sent while it was away are
 * gone, so each time it listens again it says so, and the bus wakes every waiter for a catch-up read.
 */
import { Data, Deferred, Duration, Effect, Exit, Schedule } from "effect"
import * as os from "node:os"
import pg from "pg"
import { describeUrl } from "./Database.ts"

/** Reconnecting the listening connection: quick at first, then every 5 s until it is back. */
const reconnect = Schedule.exponential(Duration.millis(100), 2).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))

class BusDisconnected extends Data.TaggedError("BusDisconnected")<{ readonly message: string }> {}

/** What the listener hands on: each payload notified on the channel, and each time it listens (again). */
export interface Listening {
  readonly notified: (payload: string) => void
  readonly listening: () => void
}

/**
 * The listening connection's name in `pg_stat_activity`: this process's. While it is there the
 * process lives; a killed or crashed process's socket closes and PostgreSQL drops it at once, so
 * another process can tell a dead run holder in seconds rather than by its heartbeat (runs/Repo.ts).
 */
export const busConnectionPrefix = "cairn-bus:"
export const busConnectionName = `${busConnectionPrefix}${os.hostname()}:${process.pid}`.slice(0, 63)

/** Listens on `channel` of the database at `url` for the caller's scope, reconnecting on its schedule. */
export const listen = (url: string, channel: string, on: Listening) => {
  // One session of LISTEN: it ends (as a failure) when the connection errors or closes.
  const session = Effect.scoped(
    Effect.gen(function*() {
      const client = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new pg.Client({ connectionString: url, application_name: busConnectionName, keepAlive: true })
            client.on("error", () => {})
            await client.connect()
            return client
          },
          catch: (cause) => new BusDisconnected({ message: cause instanceof Error ? cause.message : String(cause) })
        }),
        (client) => Effect.promise(() => client.end()).pipe(Effect.timeoutOption(Duration.seconds(1)), Effect.ignore)
      )
      const lost = yield* Deferred.make<never, BusDisconnected>()
      const drop = (why: string) => Deferred.unsafeDone(lost, Exit.fail(new BusDisconnected({ message: why })))
      client.on("notification", (message) => {
        if (message.channel === channel && message.payload) on.notified(message.payload)
      })
      client.on("error", (error) => drop(error.message))
      client.on("end", () => drop("the connection closed"))
      yield* Effect.tryPromise({
        try: () => client.query(`LISTEN ${channel}`),
        catch: (cause) => new BusDisconnected({ message: cause instanceof Error ? cause.message : String(cause) })
      })
      on.listening()
      return yield* Deferred.await(lost)
    })
  )
  return Effect.forkScoped(
    session.pipe(
      Effect.tapError((error) =>
        Effect.logWarning(`Notification bus on ${describeUrl(url)} lost its connection (${error.message}); reconnecting`)
      ),
      Effect.retry(reconnect),
      Effect.catchAllCause((cause) => Effect.logError("Notification bus stopped", cause))
    )
  )
}
