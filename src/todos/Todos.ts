/** Todos: the operator's `/api/v1/todos` and the bots' `todos` tool share this one table. */
import { Effect } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import { Bots } from "../bots/Bots.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { Channels } from "../channels/Channels.ts"
import { ValidationError } from "../contract/Errors.ts"
import { ownerOf } from "../sessions/Access.ts"
import { traced } from "../telemetry/Spans.ts"
import { TodoNotFound } from "./Errors.ts"
import { type CreateTodo, Todo, type UpdateTodo } from "./Model.ts"
import { type NewTodo, type TodoRow, TodosRepo } from "./Repo.ts"

const toTodo = (row: TodoRow) => new Todo(row)

export class Todos extends Effect.Service<Todos>()("cairn/Todos", {
  effect: Effect.gen(function*() {
    const repo = yield* TodosRepo
    const bots = yield* Bots
    const channels = yield* Channels

    const notFound = (id: string) => new TodoNotFound({ detail: `Todo not found: ${id}` })
    const get = (id: string) => Effect.flatMap(repo.find(id), (row) => (row ? Effect.succeed(toTodo(row)) : Effect.fail(notFound(id))))

    const list = (
      filter: {
        readonly botId?: string | undefined
        readonly channelId?: string | undefined
        readonly status?: "open" | "done" | undefined
        readonly limit?: number | undefined
      }
    ) => Effect.map(repo.list({ ...filter, limit: filter.limit ?? 100 }), (rows) => rows.map(toTodo))

    /** Stores a todo as given (the bot's tool, or `create` once it has checked the request). */
    const add = (todo: NewTodo) => Effect.map(repo.insert(todo), toTodo)

    /** Checks the bot and channel a request names, then stores the todo as made by `createdBy`. */
    const createBy = (input: CreateTodo, createdBy: string) =>
      Effect.gen(function*() {
        yield* Effect.mapError(bots.get(input.bot_id), () => new BotNotFound({ detail: `Unknown bot: ${input.bot_id}` }))
        if (input.channel_id) {
          yield* channels.get(input.channel_id).pipe(
            Effect.catchTag("ChannelNotFound", () => ValidationError.single(["body", "channel_id"], "Unknown channel"))
          )
        }
        return yield* add({
          botId: input.bot_id,
          channelId: input.channel_id,
          sessionId: null,
          title: input.title,
          notes: input.notes,
          dueAt: input.due_at,
          createdBy
        })
      })

    const create = (input: CreateTodo, principal: PrincipalShape) => createBy(input, ownerOf(principal))

    const update = (id: string, change: Pick<UpdateTodo, "title" | "notes" | "status" | "due_at">) =>
      Effect.gen(function*() {
        const row = yield* repo.update(id, {
          title: change.title,
          notes: change.notes,
          status: change.status,
          ...(change.due_at !== undefined ? { dueAt: change.due_at } : {})
        })
        return row ? toTodo(row) : yield* notFound(id)
      })

    const remove = (id: string) => Effect.flatMap(repo.remove(id), (removed) => (removed ? Effect.void : Effect.fail(notFound(id))))

    return traced(
      "Todos",
      { get, list, add, create, createBy, update, complete: (id: string) => update(id, { status: "done" }), remove } as const
    )
  }),
  dependencies: [TodosRepo.Default, Bots.Default, Channels.Default]
}) {}
