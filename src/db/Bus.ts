/**
 * The notification bus: what one server process tells the others that share its database (a run
 * wrote events, a cancel was asked, an approval was decided, a client tool answered, a task was
 * queued, a cache is stale). A notice only says *that* something changed; the state itself is in
 * the database, and whoever wakes reads it there. So a lost notice costs a delay, never data: every
 * wait also re-reads on a slow safety poll, and after the bus reconnects.
 *
 * - PostgreSQL: `NOTIFY` on one channel; each process keeps one listening connection of its own
 *   (outside the pool: `BusListener.ts`), reconnects when it drops, and then wakes every waiter for
 *   a catch-up read (notices sent while it was away are gone).
 * - PGlite: one process by construction, so the in-process delivery is the whole bus.
 *
 * In the process, a notice is handed only to the subscribers of its topic (and a catch-up to all):
 * a run's end, one notice a turn, wakes the one loop that waits for it rather than every loop.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option, Queue, Redacted, Schedule, Stream } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { listen } from "./BusListener.ts"
import { DatabaseInfo } from "./Database.ts"

/** What changed, by kind; the key names the thing (a run, a session, an approval...). */
export type Topic =
  | "run_events"
  | "run_end"
  | "run_cancel"
  | "approval"
  | "tool_result"
  | "tasks"
  | "task"
  | "workflows"
  | "heartbeats"
  | "invalidate"

export interface Notice {
  readonly topic: Topic | "*"
  readonly key: string
}

/** Delivered after the listening connection came back: anything may have changed meanwhile. */
const catchUp: Notice = { topic: "*", key: "*" }

/** The one PostgreSQL channel all notices travel on (the payload carries topic and key). */
const channel = "cairn_bus"

/** How a waiter with no notice re-reads anyway: a missed notice costs at most this long. */
export const safetyPoll = Schedule.spaced(Duration.seconds(5))

const encode = (notice: Notice) => `${notice.topic}\t${notice.key}`
const decode = (payload: string): Notice | undefined => {
  const tab = payload.indexOf("\t")
  return tab < 0 ? undefined : { topic: payload.slice(0, tab) as Topic, key: payload.slice(tab + 1) }
}

/** `pg_notify`'s arguments, for a statement that sends its own notice (`Bus.publishWith`). */
export interface StatementNotice {
  readonly channel: string
  readonly payload: string
}

/** Keys told of in one notice (`publishAll`) are joined by this; no key contains it. */
const keySeparator = ","
const maxKeysLength = 7000

/** One topic or several, as a waiter may wake on any of them. */
export type Topics = Topic | ReadonlyArray<Topic>

const hasTopic = (topics: Topics, topic: Topic | "*") =>
  typeof topics === "string" ? topics === topic : (topics as ReadonlyArray<string>).includes(topic)

/** Whether a notice a subscription received (its topics' or a catch-up) is about `key` (any, when undefined). */
const isAbout = (notice: Notice, key: string | undefined) =>
  notice.topic === "*" ||
  key === undefined ||
  notice.key === key ||
  (notice.key.includes(keySeparator) && notice.key.split(keySeparator).includes(key))

/** A subscription: the notices it takes, and its queue of them. */
interface Subscriber {
  readonly topics: Topics
  /** Only the notices about this key (and the catch-ups); every key when undefined. */
  readonly key: string | undefined
  /** Asked at each notice of its topics: only while it answers true does the notice go in. */
  readonly wanted: (() => boolean) | undefined
  readonly queue: Queue.Queue<Notice>
}

/** What a waiter waits for besides its notices: a safety poll's next tick, or nothing (`null`). */
export interface WakeOptions {
  readonly key?: string | undefined
  /** Re-read on this schedule even without a notice (default `safetyPoll`); `null`: only notices. */
  readonly safety?: Schedule.Schedule<unknown, unknown> | null
  /** See `Subscriber.wanted`. */
  readonly wanted?: () => boolean
}

export class Bus extends Effect.Service<Bus>()("cairn/Bus", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const info = yield* DatabaseInfo
    const config = yield* AppConfig
    const subscribers = new Set<Subscriber>()
    const deliver = (notice: Notice) => {
      for (const subscriber of subscribers) {
        if (
          notice.topic === "*" ||
          (hasTopic(subscriber.topics, notice.topic) && isAbout(notice, subscriber.key) && (subscriber.wanted?.() ?? true))
        ) {
          subscriber.queue.unsafeOffer(notice)
        }
      }
    }
    /**
     * A queue of the notices of `topics` (about `key`, when given; only while `wanted` answers true,
     * when given) and the catch-ups, for the caller's scope. Sorted out as they are delivered, so a
     * notice nobody waits for wakes no fiber: a run's end, one a turn, reaches none of the loops that
     * do not care for it now.
     */
    const subscribe = (topics: Topics, key?: string, wanted?: () => boolean) =>
      Effect.acquireRelease(
        Effect.map(Queue.unbounded<Notice>(), (queue) => {
          const subscriber: Subscriber = { topics, key, wanted, queue }
          subscribers.add(subscriber)
          return subscriber
        }),
        (subscriber) => Effect.zipRight(Effect.sync(() => subscribers.delete(subscriber)), Queue.shutdown(subscriber.queue))
      ).pipe(Effect.map((subscriber): Queue.Dequeue<Notice> => subscriber.queue))

    // Around a pooler in transaction mode, which cannot keep a LISTEN (DATABASE_LISTEN_URL).
    const listenUrl = Option.orElse(config.databaseListenUrl, () => config.databaseUrl)
    if (info.backend === "postgres" && Option.isSome(listenUrl)) {
      yield* listen(Redacted.value(listenUrl.value), channel, {
        notified: (payload) => {
          const notice = decode(payload)
          if (notice) deliver(notice)
        },
        // Whatever was notified while no connection listened is read again by every waiter.
        listening: () => deliver(catchUp)
      })
    }

    /**
     * Tells every process (this one included) that `key` of `topic` changed. On PostgreSQL inside a
     * transaction it is sent at commit, so a waiter that wakes reads the change.
     */
    const publish = (topic: Topic, key: string): Effect.Effect<void> =>
      info.backend === "postgres"
        ? sql`SELECT pg_notify(${channel}, ${encode({ topic, key })})`.pipe(
          Effect.asVoid,
          // A notice that cannot be sent is only a delay: the safety poll reads it anyway.
          Effect.catchAllCause((cause) => Effect.logWarning(`Could not notify ${topic}`, cause))
        )
        : Effect.sync(() => deliver({ topic, key }))

    /**
     * Makes a change and tells of it in one round trip: on PostgreSQL `change` sends the notice
     * from its own statement (`SELECT pg_notify(channel, payload)` in it, sent at its commit, as
     * `publish` inside a transaction is); in-process (PGlite) it is delivered once `change` succeeded.
     */
    const publishWith = <A, E, R>(
      topic: Topic,
      key: string,
      change: (notice: StatementNotice | undefined) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E, R> =>
      info.backend === "postgres"
        ? change({ channel, payload: encode({ topic, key }) })
        : Effect.tap(change(undefined), () => Effect.sync(() => deliver({ topic, key })))

    /** Tells of several keys at once, a few notices in all (a notice holds under 8000 bytes). */
    const publishAll = (topic: Topic, keys: ReadonlyArray<string>): Effect.Effect<void> => {
      const batches: Array<string> = []
      let batch = ""
      for (const key of keys) {
        if (batch.length + key.length + 1 > maxKeysLength && batch) {
          batches.push(batch)
          batch = ""
        }
        batch = batch ? `${batch}${keySeparator}${key}` : key
      }
      if (batch) batches.push(batch)
      return Effect.forEach(batches, (keys) => publish(topic, keys), { discard: true })
    }

    /** The keys of `topic` as they are notified here ("*" after a reconnect: re-read everything). */
    const changes = (topic: Topic): Stream.Stream<string> =>
      Stream.unwrapScoped(Effect.map(subscribe(topic), (queue) => Stream.fromQueue(queue))).pipe(
        Stream.flatMap((notice) => Stream.fromIterable(notice.key.split(keySeparator)))
      )

    /** Takes every notice queued so far: one read answers them all. */
    const drained = (subscription: Queue.Dequeue<Notice>) =>
      Effect.asVoid(Effect.zipRight(Queue.take(subscription), Queue.takeAll(subscription)))

    /** Waits for a notice of the subscription or, when there is a poll, the poll's next tick. */
    const nextWake = (subscription: Queue.Dequeue<Notice>, poll: Schedule.ScheduleDriver<unknown, unknown, never> | null) =>
      poll === null
        ? drained(subscription)
        : Effect.raceFirst(
          drained(subscription),
          // A schedule that ends leaves only the notices.
          poll.next(undefined).pipe(Effect.asVoid, Effect.catchAll(() => Effect.never))
        )

    const driverOf = (safety: Schedule.Schedule<unknown, unknown> | null | undefined) =>
      safety === null ? Effect.succeed(null) : Schedule.driver(safety ?? safetyPoll)

    /**
     * For a loop that re-reads (the task worker, a reader of another process's run): an effect
     * that waits for the next notice of `topic` (for `options.key`, when given) or the next tick of
     * `options.safety`. Subscribed for the caller's scope, so notices between two waits are not missed.
     */
    const waker = (topic: Topics, options: WakeOptions = {}) =>
      Effect.gen(function*() {
        const subscription = yield* subscribe(topic, options.key, options.wanted)
        const poll = yield* driverOf(options.safety)
        return nextWake(subscription, poll)
      })

    /**
     * Runs `check` now and again after each notice of `topic` (for `key`, when given), after a
     * reconnect, and on the `safety` schedule, until it finds something. Subscribed before the
     * first check, so a notice between a check and the wait is never missed.
     */
    const awaitSome = <A, E, R>(
      topic: Topics,
      key: string | undefined,
      check: Effect.Effect<Option.Option<A>, E, R>,
      safety: Schedule.Schedule<unknown, unknown> = safetyPoll
    ): Effect.Effect<A, E, R> =>
      Effect.scoped(
        Effect.gen(function*() {
          const subscription = yield* subscribe(topic, key)
          const poll = yield* Schedule.driver(safety)
          while (true) {
            const found = yield* check
            if (Option.isSome(found)) return found.value
            yield* nextWake(subscription, poll)
          }
        })
      )

    /**
     * A loop that looks when told to rather than on a clock: runs `look`, which answers how long
     * (ms) nothing needs it (the next slot, a timeout), then waits for that or a notice of `topics`,
     * whichever comes first, and never starts a look sooner than `spacingMs` after the last one
     * began (a burst of notices costs one look). Subscribed before the first look, so a notice
     * during a look is not missed.
     */
    const lookLoop = <E, R>(topics: Topics, look: Effect.Effect<number, E, R>, spacingMs: number): Effect.Effect<never, E, R> =>
      Effect.scoped(
        Effect.gen(function*() {
          const subscription = yield* subscribe(topics)
          for (;;) {
            const began = Date.now()
            const idleMs = yield* look
            yield* Effect.raceFirst(nextWake(subscription, null), Effect.sleep(Duration.millis(Math.max(0, idleMs))))
            const sinceLook = Date.now() - began
            if (sinceLook < spacingMs) yield* Effect.sleep(Duration.millis(spacingMs - sinceLook))
          }
        })
      )

    return {
      publish,
      publishWith,
      publishAll,
      changes,
      awaitSome,
      waker,
      lookLoop,
      backend: info.backend,
      /**
       * Whether every change reaches its waiters as a notice: on PGlite (one process, the bus is
       * in-process) none can be lost, so a safety poll there guards only against a change made
       * without one.
       */
      lossless: info.backend === "pglite"
    } as const
  })
}) {}
