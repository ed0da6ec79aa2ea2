/** `todos`: the bot's own to-do list, through the same service as `/api/v1/todos`. */
import { Effect, Schema } from "effect"
import type { Todo } from "../../todos/Model.ts"
import { Todos } from "../../todos/Todos.ts"
import { ChoiceArgument, CountArgument, declareTool, ToolFailure } from "../Tool.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const shown = (todo: Todo) =>
  `${todo.id} [${todo.status}] ${todo.title}${todo.due_at ? ` (due ${todo.due_at.toISOString()})` : ""}${
    todo.notes ? `: ${todo.notes}` : ""
  }`

const dueOf = (value: string | null | undefined) =>
  value === undefined || value === null || value === ""
    ? Effect.succeed(null)
    : !Number.isNaN(Date.parse(value))
    ? Effect.succeed(new Date(value))
    : new ToolFailure({ message: "due must be an ISO 8601 date or date-time" })

const TodosArguments = Schema.Struct({
  action: ChoiceArgument("create", "list", "update", "complete", "reopen"),
  id: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  notes: Schema.optional(Schema.String),
  due: Schema.optional(Schema.NullOr(Schema.String.annotations({ description: "ISO 8601 date or date-time" }))),
  status: Schema.optional(ChoiceArgument("open", "done", "all")),
  limit: Schema.optional(CountArgument({ min: 1, max: 100 }))
})

export const todoTools = Effect.gen(function*() {
  const service = yield* Todos

  /** The bot's own todo's id; another bot's todo is not found. */
  const own = (id: string | undefined, botId: string) =>
    Effect.gen(function*() {
      const found = id !== undefined && uuid.test(id) ? yield* Effect.option(service.get(id)) : undefined
      if (found?._tag !== "Some" || found.value.bot_id !== botId) return yield* new ToolFailure({ message: `No todo ${String(id)}` })
      return found.value.id
    })

  const todos = yield* declareTool({
    name: "todos",
    description:
      "Your to-do list, kept across conversations. action: create (title, notes?, due?), list (status? open|done|all), update (id, title?, notes?, due?), complete (id), reopen (id).",
    effect: "write",
    parameters: TodosArguments,
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        switch (args.action) {
          case "create": {
            const title = (args.title ?? "").trim()
            if (!title) return yield* new ToolFailure({ message: "title must not be empty" })
            const todo = yield* service.add({
              botId: context.botId,
              channelId: context.channelId,
              sessionId: context.sessionId,
              title,
              notes: args.notes ?? "",
              dueAt: yield* dueOf(args.due),
              createdBy: `bot:${context.botId}`
            })
            return `Created ${shown(todo)}`
          }
          case "list": {
            const status = args.status ?? "open"
            const list = yield* service.list({
              botId: context.botId,
              status: status === "all" ? undefined : status,
              limit: args.limit ?? 50
            })
            return list.length === 0 ? `No ${status === "all" ? "" : `${status} `}todos.` : list.map(shown).join("\n")
          }
          case "update": {
            const id = yield* own(args.id, context.botId)
            const updated = yield* service.update(id, {
              title: args.title?.trim() || undefined,
              notes: args.notes,
              due_at: args.due !== undefined ? yield* dueOf(args.due) : undefined
            })
            return `Updated ${shown(updated)}`
          }
          case "complete":
          case "reopen": {
            const id = yield* own(args.id, context.botId)
            const updated = yield* service.update(id, { status: args.action === "complete" ? "done" : "open" })
            return `${args.action === "complete" ? "Completed" : "Reopened"} ${shown(updated)}`
          }
        }
      })
  })

  return [todos]
})
