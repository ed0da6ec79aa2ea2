/**
 * The inbound ledger: one path for everything that comes in. A source records an item under its
 * own id before it acknowledges it (`receive`); a second `receive` of the same id finds the row,
 * so a replay, a catch-up or a restart never acts on it twice. The routing decision moves it once
 * (`settle`: ignored, passive, delivered; `route`: queued with its tasks), in the transaction that
 * does the decided work; after that its tasks move it (run, delivered, failed, dead), read by
 * `sync` whenever a task changes. An item that exhausted its attempts is a dead letter: a person
 * retries or discards it (`retry`, `discard`).
 */
import { SqlClient } from "@effect/sql"
import { Config, Effect } from "effect"
import { isUuid } from "../contract/Params.ts"
import { Bus } from "../db/Bus.ts"
import { transactions } from "../db/Repository.ts"
import { Readiness } from "../health/Readiness.ts"
import { armed, faultPointFor } from "../lifecycle/FaultInjection.ts"
import { Dispatchers } from "../tasks/delivery/Dispatchers.ts"
import { traced } from "../telemetry/Spans.ts"
import { DeadLetterConflict, DeadLetterNotFound, InboundDraining } from "./Errors.ts"
import { DeadLetters, InboundItem, type SettledState } from "./Model.ts"
import { InboundRepo, type ItemRow, type NewItem } from "./Repo.ts"

const inboundConfig = Config.all({
  /** Attempts of an item its source handles itself (a mail) before it is a dead letter. */
  maxAttempts: Config.integer("INBOUND_MAX_ATTEMPTS").pipe(Config.withDefault(5))
})

export const toItem = (row: ItemRow) => new InboundItem({ ...row, task_ids: row.task_ids ?? [] })

/** Why a routing was not done: the item was decided before (its state says how). */
export interface AlreadyDecided {
  readonly _tag: "AlreadyDecided"
  readonly item: ItemRow
}

/** What a source does with an item of its own a person retried (an integration's `cairn.inbound.onRetry`). */
export type RetryHandler = (item: ItemRow) => Effect.Effect<void, unknown>

export class Inbound extends Effect.Service<Inbound>()("cairn/Inbound", {
  effect: Effect.gen(function*() {
    const config = yield* inboundConfig
    const repo = yield* InboundRepo
    const transaction = transactions(yield* SqlClient.SqlClient)
    const dispatchers = yield* Dispatchers
    const bus = yield* Bus
    const readiness = yield* Readiness

    /** Each source's retry handler, registered in this process (the retry runs where a person asked for it). */
    const retryHandlers = new Map<string, RetryHandler>()

    const notFound = (id: string) => new DeadLetterNotFound({ detail: `Dead letter not found: ${id}` })

    /**
     * Moves a received (or failed) item to `state` and does `work` in the same transaction: both or
     * neither. Nothing is done when it was decided before (another process, a replay): answers undefined.
     */
    const decide = <A, E, R>(id: string, state: "queued" | SettledState, reason: string | null, work: Effect.Effect<A, E, R>) =>
      Effect.tap(
        transaction(
          Effect.gen(function*() {
            // The guarded move first: its row lock makes a second decider wait, then find it decided.
            const moved = yield* repo.move(id, ["received", "failed"], state, { reason })
            if (!moved) return undefined
            if (state === "queued" && (yield* repo.hasTasks(id))) {
              return yield* Effect.die(new Error(`Inbound item ${id} has tasks already`))
            }
            return { value: yield* work }
          })
        ),
        (done) =>
          done && armed("after-route")
            ? Effect.flatMap(repo.find(id), (row) => faultPointFor("after-route", `${row?.external_id} ${row?.summary}`))
            : Effect.void
      )

    /**
     * Records the item once (before its source is answered): the row, and whether this call made
     * it. Refused while the server stops (the drain): the source is told to try again, not answered
     * and then dropped.
     */
    const receive = (item: NewItem) =>
      Effect.flatMap(readiness.isDraining, (draining) =>
        draining
          ? Effect.fail(new InboundDraining({ message: "The server is stopping: the item is not taken now; send it again" }))
          : Effect.tap(
            repo.receive(item),
            (received) => received.created ? faultPointFor("after-receive", `${item.externalId} ${item.summary}`) : Effect.void
          ))

    /** The routing's decision without a run: ignored (why), passive (with its stores) or delivered. */
    const settle = <A, E, R>(id: string, state: SettledState, reason: string | null, work: Effect.Effect<A, E, R>) =>
      decide(id, state, reason, work)

    /** The routing's decision with runs: the tasks are queued with the move to `queued`. */
    const route = <A, E, R>(id: string, reason: string | null, work: Effect.Effect<A, E, R>) =>
      Effect.tap(decide(id, "queued", reason, work), (done) => (done ? bus.publish("tasks", "queued") : Effect.void))

    /** A failed attempt of the source's own handling: `failed`, or `dead` after INBOUND_MAX_ATTEMPTS. */
    const fail = (id: string, error: string) => repo.fail(id, error.slice(0, 2000), config.maxAttempts)

    /** Moves items that queued tasks to the state their tasks are in; failed deliveries of other tasks become items. */
    const sync = Effect.zipRight(repo.adoptDeliveries, repo.sync)

    const deadLetters = (
      filter: { readonly source?: string; readonly integration?: string; readonly channelId?: string; readonly limit?: number }
    ) =>
      Effect.map(
        Effect.all([repo.deadLetters({ ...filter, limit: filter.limit ?? 50 }), repo.deadCounts]),
        ([rows, counts]) => new DeadLetters({ items: rows.map(toItem), counts })
      )

    const dead = (id: string) =>
      Effect.gen(function*() {
        const row = isUuid(id) ? yield* repo.find(id) : undefined
        if (!row) return yield* notFound(id)
        if (row.state !== "dead") {
          return yield* new DeadLetterConflict({ detail: `Inbound item ${id} is ${row.state}, not a dead letter` })
        }
        return row
      })

    /**
     * Gives a dead letter another go: a run that failed is queued again (its message is stored
     * already), a delivery that gave up is tried again from its first attempt, and an item its
     * source handles itself is `received` again and handed to the source's retry handler at once
     * (in the background; without one, or should it fail, the source's own next pass takes it).
     * Answers the item as moved.
     */
    const retry = (id: string) =>
      Effect.gen(function*() {
        const row = yield* dead(id)
        const taskRows = yield* repo.tasksOf(row.id)
        const redeliver = taskRows.filter((task) => task.status !== "failed" && ["failed", "uncertain"].includes(task.delivery_status))
        const rerun = taskRows.filter((task) => task.status === "failed")
        const next = taskRows.length === 0 ? "received" : rerun.length > 0 ? "queued" : "run"
        const moved = yield* transaction(
          Effect.gen(function*() {
            const moved = yield* repo.move(row.id, ["dead"], next, { reason: "retried by a person" })
            if (!moved) return false
            yield* Effect.forEach(redeliver, (task) => repo.redeliver(task.id), { discard: true })
            yield* Effect.forEach(rerun, (task) => repo.rerun(task.id), { discard: true })
            return true
          })
        )
        if (!moved) return yield* new DeadLetterConflict({ detail: `Inbound item ${id} changed meanwhile` })
        if (rerun.length > 0) yield* bus.publish("tasks", "queued")
        yield* Effect.forEach(redeliver, (task) => Effect.forkDaemon(dispatchers.deliver(task.id)), { discard: true })
        const now = (yield* repo.find(row.id))!
        const handler = retryHandlers.get(row.source)
        if (next === "received" && handler) {
          yield* Effect.forkDaemon(
            handler(now).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning(`Inbound item ${row.id}: the retry by ${row.source} failed`, cause))
            )
          )
        }
        return toItem(now)
      })

    /** Registers the retry handler of a source (one per source: a second replaces the first). */
    const onRetry = (source: string, handler: RetryHandler) => {
      retryHandlers.set(source, handler)
    }

    /** A dead letter a person gave up on: kept (its source id stays known), never acted on again. */
    const discard = (id: string) =>
      Effect.gen(function*() {
        const row = yield* dead(id)
        if (!(yield* repo.move(row.id, ["dead"], "discarded", { reason: "discarded by a person" }))) {
          return yield* new DeadLetterConflict({ detail: `Inbound item ${id} changed meanwhile` })
        }
        return toItem((yield* repo.find(row.id))!)
      })

    return traced(
      "Inbound",
      {
        receive,
        settle,
        route,
        fail,
        sync,
        open: repo.open,
        bySource: repo.bySource,
        find: repo.find,
        deadLetters,
        retry,
        onRetry,
        discard
      } as const
    )
  }),
  dependencies: [InboundRepo.Default, Dispatchers.Default, Bus.Default, Readiness.Default]
}) {}
