/** SQL for todos. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { Todo } from "./Model.ts"

/** A todo as stored: the API's `Todo` as the driver hands it over (its type side: timestamps as `Date`). */
export const TodoRow = Schema.typeSchema(Schema.Struct(Todo.fields))
export type TodoRow = typeof TodoRow.Type

export interface NewTodo {
  readonly botId: string
  readonly channelId: string | null
  readonly sessionId: string | null
  readonly title: string
  readonly notes: string
  readonly dueAt: Date | null
  readonly createdBy: string
}

export interface TodoChange {
  readonly title?: string | undefined
  readonly notes?: string | undefined
  readonly status?: TodoRow["status"] | undefined
  readonly dueAt?: Date | null | undefined
}

const columns = "id, bot_id, channel_id, session_id, title, notes, status, due_at, created_at, updated_at, completed_at, created_by"

export class TodosRepo extends Effect.Service<TodosRepo>()("cairn/TodosRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(TodoRow)
    return repository("TodosRepo", {
      insert: (todo: NewTodo) =>
        rows(sql`INSERT INTO todos (id, bot_id, channel_id, session_id, title, notes, due_at, created_by)
                 VALUES (${randomUUID()}, ${todo.botId}, ${todo.channelId}, ${todo.sessionId}, ${todo.title}, ${todo.notes}, ${todo.dueAt}, ${todo.createdBy})
                 RETURNING ${sql.literal(columns)}`).pipe(Effect.map((list) => list[0]!)),
      /** A bot's todos, open ones first, oldest first. */
      list: (filter: {
        readonly botId?: string | undefined
        readonly channelId?: string | undefined
        readonly status?: TodoRow["status"] | undefined
        readonly limit: number
      }) =>
        rows(sql`SELECT ${sql.literal(columns)} FROM todos
                 WHERE (${filter.botId ?? null}::text IS NULL OR bot_id = ${filter.botId ?? null})
                   AND (${filter.channelId ?? null}::uuid IS NULL OR channel_id = ${filter.channelId ?? null}::uuid)
                   AND (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null})
                 ORDER BY status = 'done', created_at LIMIT ${filter.limit}`),
      find: (id: string) => rows(sql`SELECT ${sql.literal(columns)} FROM todos WHERE id = ${id}`).pipe(Effect.map(firstRow)),
      /** Changes the fields given; completing sets completed_at, reopening clears it. */
      update: (id: string, change: TodoChange) =>
        rows(sql`UPDATE todos SET
                   title = coalesce(${change.title ?? null}, title),
                   notes = coalesce(${change.notes ?? null}, notes),
                   status = coalesce(${change.status ?? null}, status),
                   due_at = CASE WHEN ${change.dueAt !== undefined} THEN ${change.dueAt ?? null}::timestamptz ELSE due_at END,
                   completed_at = CASE WHEN ${change.status ?? null}::text = 'done' THEN coalesce(completed_at, now())
                                       WHEN ${change.status ?? null}::text = 'open' THEN NULL ELSE completed_at END,
                   updated_at = now()
                 WHERE id = ${id} RETURNING ${sql.literal(columns)}`).pipe(Effect.map(firstRow)),
      remove: (id: string) => Effect.map(sql`DELETE FROM todos WHERE id = ${id} RETURNING id`, (deleted) => deleted.length === 1)
    })
  })
}) {}
