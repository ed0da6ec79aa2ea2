/**
 * SQL of the inbound ledger (migration 0085). Each move of an item is one statement, guarded by
 * the states it may move from, so two processes (or a replay and a catch-up) never both move it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { InboundItem, type InboundState } from "./Model.ts"

/** A row as the driver hands it over, with the ids of the tasks that answer it. */
const ItemRow = Schema.typeSchema(Schema.Struct({
  ...InboundItem.fields,
  task_ids: Schema.NullOr(Schema.Array(Schema.String))
})).pipe(Schema.extend(Schema.Struct({ payload: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })))
export type ItemRow = typeof ItemRow.Type

const CountRow = Schema.Struct({ source: Schema.String, count: Schema.Union(Schema.Number, Schema.NumberFromString) })
const MovedRow = Schema.Struct({ id: Schema.String, state: Schema.String })

/** The states an item is still moving in (not final). */
export const openStates: ReadonlyArray<InboundState> = ["received", "queued", "run", "failed"]

export interface NewItem {
  readonly source: string
  readonly externalId: string
  readonly integration: string | null
  readonly channelId: string | null
  readonly summary: string
  readonly payload: Record<string, unknown>
}

/**
 * The state an item that queued tasks is in, from its tasks (all of them: a message for two
 * channels is delivered when both answers are): running or waiting first, then what ended them.
 */
const derivedState = `CASE
  WHEN bool_or(t.status = 'running') THEN 'run'
  WHEN bool_or(t.status = 'pending') THEN 'queued'
  WHEN bool_and(t.status = 'cancelled') THEN 'discarded'
  WHEN bool_or(t.delivery_status = 'pending' AND t.delivery_attempts > 0) THEN 'failed'
  WHEN bool_or(t.delivery_status = 'pending') THEN 'run'
  WHEN bool_or(t.status = 'failed' OR t.delivery_status IN ('failed', 'uncertain')) THEN 'dead'
  ELSE 'delivered' END`

const derivedError =
  `max(CASE WHEN t.delivery_status = 'uncertain' THEN 'uncertain: ' || coalesce(t.delivery_error, 'the send may or may not have arrived')
  WHEN t.delivery_status IN ('failed', 'pending') AND t.delivery_error IS NOT NULL THEN t.delivery_error
  WHEN t.status = 'failed' THEN coalesce(t.error, 'the run failed') END)`

export class InboundRepo extends Effect.Service<InboundRepo>()("cairn/InboundRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(ItemRow)
    const select = sql`SELECT i.*, (SELECT array_agg(t.id::text ORDER BY t.created_at) FROM tasks t WHERE t.inbound_id = i.id) AS task_ids
                       FROM inbound_items i`
    return repository("InboundRepo", {
      /** Records the item once; `created` false when its source id was recorded before (the row as it is). */
      receive: (item: NewItem) =>
        Effect.gen(function*() {
          const inserted = yield* sql`INSERT INTO inbound_items (id, source, external_id, integration, channel_id, summary, payload)
            VALUES (${randomUUID()}, ${item.source}, ${item.externalId}, ${item.integration}, ${item.channelId},
                    ${item.summary}, ${JSON.stringify(item.payload)}::jsonb)
            ON CONFLICT (source, external_id) DO NOTHING RETURNING id`
          const found = yield* rows(sql`${select} WHERE i.source = ${item.source} AND i.external_id = ${item.externalId}`)
          return { item: found[0]!, created: inserted.length === 1 }
        }),
      find: (id: string) => Effect.map(rows(sql`${select} WHERE i.id = ${id}`), firstRow),
      bySource: (source: string, externalId: string) =>
        Effect.map(rows(sql`${select} WHERE i.source = ${source} AND i.external_id = ${externalId}`), firstRow),
      /** Moves the item to `state` when it is in one of `from`; the row as moved, or undefined. */
      move: (
        id: string,
        from: ReadonlyArray<InboundState>,
        state: InboundState,
        fields: { readonly reason?: string | null; readonly channelId?: string | null; readonly lastError?: string | null } = {}
      ) =>
        Effect.map(
          sql`UPDATE inbound_items SET state = ${state}, updated_at = clock_timestamp(),
                reason = ${fields.reason === undefined ? sql`reason` : sql`${fields.reason}`},
                channel_id = ${fields.channelId === undefined ? sql`channel_id` : sql`${fields.channelId}`},
                last_error = ${fields.lastError === undefined ? sql`last_error` : sql`${fields.lastError}`}
              WHERE id = ${id} AND state IN ${sql.in(from)} RETURNING id`,
          (moved) => moved.length === 1
        ),
      /** A failed attempt: `failed`, or `dead` once it has used `maxAttempts`. */
      fail: (id: string, error: string, maxAttempts: number) =>
        Effect.map(
          decodeRows(MovedRow)(sql`UPDATE inbound_items SET attempts = attempts + 1, last_error = ${error},
                state = CASE WHEN attempts + 1 >= ${maxAttempts} THEN 'dead' ELSE 'failed' END,
                reason = CASE WHEN attempts + 1 >= ${maxAttempts} THEN 'attempts exhausted' ELSE reason END,
                updated_at = clock_timestamp()
              WHERE id = ${id} AND state IN ('received', 'failed') RETURNING id, state`),
          firstRow
        ),
      /** A source's items still to be acted on (received, or failed and to be tried again), oldest first. */
      open: (source: string, limit: number) =>
        rows(sql`${select} WHERE i.source = ${source} AND i.state IN ('received', 'failed') ORDER BY i.received_at LIMIT ${limit}`),
      /** Whether a task answers the item (its routing was decided and recorded with the task). */
      hasTasks: (id: string) => Effect.map(sql`SELECT 1 FROM tasks WHERE inbound_id = ${id} LIMIT 1`, (found) => found.length > 0),
      /**
       * Moves every open item that queued tasks to the state its tasks say (one statement), the
       * newest task of each session counting (a retried run replaces the one that failed); answers
       * what moved.
       */
      sync: decodeRows(MovedRow)(sql`UPDATE inbound_items i SET state = d.next, last_error = coalesce(d.error, i.last_error),
            reason = CASE WHEN d.next = 'dead' THEN coalesce(d.error, i.reason) ELSE i.reason END,
            attempts = d.attempts, updated_at = clock_timestamp()
          FROM (SELECT t.inbound_id AS id, ${sql.literal(derivedState)} AS next, ${sql.literal(derivedError)} AS error,
                       max(t.attempts + t.delivery_attempts) AS attempts
                FROM (SELECT DISTINCT ON (t.inbound_id, t.session_id) t.* FROM tasks t
                      JOIN inbound_items o ON o.id = t.inbound_id AND o.state IN ('received', 'queued', 'run', 'failed')
                      ORDER BY t.inbound_id, t.session_id, t.created_at DESC) t
                GROUP BY t.inbound_id) d
          WHERE i.id = d.id AND i.state <> d.next RETURNING i.id, i.state`),
      /**
       * A result delivery that failed, of a task no inbound item answers (a message put in through
       * the API, a heartbeat): recorded as an item of source `dispatch`, so it reaches the
       * dead-letter queue like any other.
       */
      adoptDeliveries: Effect.gen(function*() {
        const orphans = yield* sql<{ id: string; channel_id: string | null; dispatch_type: string; prompt: string }>`
          SELECT id, channel_id, dispatch_type, prompt FROM tasks
          WHERE inbound_id IS NULL AND dispatch_type <> 'none' AND delivery_attempts > 0
            AND delivery_status IN ('pending', 'failed', 'uncertain') LIMIT 100`
        for (const task of orphans) {
          const id = randomUUID()
          yield* sql`INSERT INTO inbound_items (id, source, external_id, integration, channel_id, state, summary, payload)
            VALUES (${id}, 'dispatch', ${task.id}, NULL, ${task.channel_id}, 'run', ${task.prompt.slice(0, 120)},
                    ${JSON.stringify({ dispatch_type: task.dispatch_type })}::jsonb)
            ON CONFLICT (source, external_id) DO NOTHING`
          yield* sql`UPDATE tasks SET inbound_id = (SELECT id FROM inbound_items WHERE source = 'dispatch' AND external_id = ${task.id})
                     WHERE id = ${task.id} AND inbound_id IS NULL`
        }
        return orphans.length
      }),
      deadLetters: (
        filter: { readonly source?: string; readonly integration?: string; readonly channelId?: string; readonly limit: number }
      ) =>
        rows(sql`${select} WHERE ${
          sql.and([
            sql`i.state = 'dead'`,
            filter.source === undefined ? sql`true` : sql`i.source = ${filter.source}`,
            filter.integration === undefined ? sql`true` : sql`i.integration = ${filter.integration}`,
            filter.channelId === undefined ? sql`true` : sql`i.channel_id = ${filter.channelId}`
          ])
        } ORDER BY i.updated_at DESC LIMIT ${filter.limit}`),
      deadCounts: Effect.map(
        decodeRows(CountRow)(sql`SELECT source, count(*) AS count FROM inbound_items WHERE state = 'dead' GROUP BY source`),
        (counted) => Object.fromEntries(counted.map((row) => [row.source, Number(row.count)]))
      ),
      /** The tasks of an item, for a retry: what failed (the run, or its delivery). */
      tasksOf: (id: string) =>
        sql<{ id: string; status: string; delivery_status: string }>`SELECT id, status, delivery_status FROM tasks
          WHERE inbound_id = ${id} ORDER BY created_at`,
      /** Gives a task whose delivery gave up (failed, uncertain) its delivery again, from the first attempt. */
      redeliver: (taskId: string) =>
        sql`UPDATE tasks SET delivery_status = 'pending', delivery_attempts = 0, delivery_lease_until = NULL
            WHERE id = ${taskId} AND delivery_status IN ('failed', 'uncertain')`.pipe(Effect.asVoid),
      /** Queues a failed task's run again (its message is stored already). */
      rerun: (taskId: string) =>
        sql`INSERT INTO tasks (id, source, bot_id, session_id, channel_id, client_id, prompt, prompt_stored, model_override,
                               dispatch_type, dispatch_config, execution_config, attachments, inbound_id)
            SELECT ${randomUUID()}, source, bot_id, session_id, channel_id, client_id, prompt, true, model_override,
                   dispatch_type, dispatch_config, execution_config, attachments, inbound_id
            FROM tasks WHERE id = ${taskId}`.pipe(Effect.asVoid)
    })
  })
}) {}
