/** `todos`: the bot's own to-do list, through the same service as `/api/v1/todos`. */
import { Effect } from "effect"
import type { Todo } from "../../todos/Model.ts"
import { Todos } from "../../todos/Todos.ts"
import { count, text, type EffectTool } from "./Tool.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const shown = (todo: Todo) =>
  `${todo.id} [${todo.status}] ${todo.title}${todo.due_at ? ` (due ${todo.due_at.toISOString()})` : ""}${todo.notes ? `: ${todo.notes}` : ""}`

const dueOf = (value: unknown) =>
  value === undefined || value === null || value === ""
    ? Effect.succeed(null)
    : typeof value === "string" && !Number.isNaN(Date.parse(value))
      ? Effect.succeed(new Date(value))
      : Effect.fail(new Error("due must be an ISO 8601 date or date-time"))

export const todoTools = Effect.gen(function* () {
  const service = yield* Todos

  /** The bot's own todo's id; another bot's todo is not found. */
  const own = (id: unknown, botId: string) =>
    Effect.gen(function* () {
      const found = typeof id === "string" && uuid.test(id) ? yield* Effect.option(service.get(id)) : undefined
      if (found?._tag !== "Some" || found.value.bot_id !== botId) return yield* Effect.fail(new Error(`No todo ${String(id)}`))
      return found.value.id
    })

  const todos: EffectTool = {
    name: "todos",
    description:
      "Your to-do list, kept across conversations. action: create (title, notes?, due?), list (status? open|done|all), update (id, title?, notes?, due?), complete (id), reopen (id).",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["create", "list", "update", "complete", "reopen"] },
        id: { type: "string" },
        title: { type: "string" },
        notes: { type: "string" },
        due: { type: "string", description: "ISO 8601 date or date-time" },
        status: { type: "string", enum: ["open", "done", "all"] },
        limit: { type: "integer", minimum: 1, maximum: 100 }
      },
      required: ["action"]
    },
    run: (args, context) =>
      Effect.gen(function* () {
        switch (args.action) {
          case "create": {
            const title = (yield* text(args, "title")).trim()
            if (!title) return yield* Effect.fail(new Error("title must not be empty"))
            const todo = yield* service.add({
              botId: context.botId,
              channelId: context.channelId,
              sessionId: context.sessionId,
              title,
              notes: yield* text(args, "notes", { optional: true }),
              dueAt: yield* dueOf(args.due),
              createdBy: `bot:${context.botId}`
            })
            return `Created ${shown(todo)}`
          }
          case "list": {
            const status = args.status === "done" || args.status === "all" ? args.status : "open"
            const list = yield* service.list({ botId: context.botId, status: status === "all" ? undefined : status, limit: count(args, "limit", 50, 100) })
            return list.length === 0 ? `No ${status === "all" ? "" : `${status} `}todos.` : list.map(shown).join("\n")
          }
          case "update": {
            const id = yield* own(args.id, context.botId)
            const updated = yield* service.update(id, {
              title: typeof args.title === "string" && args.title.trim() ? args.title.trim() : undefined,
              notes: typeof args.notes === "string" ? args.notes : undefined,
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
          default:
            return yield* Effect.fail(new Error("action must be create, list, update, complete or reopen"))
        }
      })
  }

  return [todos]
})
