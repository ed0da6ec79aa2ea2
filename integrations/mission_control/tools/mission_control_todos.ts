import { defineTool } from "../../../src/sdk/index.ts"
import { cairnContext } from "../state.ts"

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "mission_control_todos",
      description:
        "Manages the todos of every bot from mission control. action: list (status open or done; optional bot_id, channel_id), add (title, optional notes, bot_id, channel_id, due_at as ISO date-time), complete (id).",
      parameters: {
        type: "object",
        properties: {
          action: { type: "string", enum: ["list", "add", "complete"] },
          status: { type: "string", enum: ["open", "done"] },
          id: { type: "string" },
          title: { type: "string" },
          notes: { type: "string" },
          bot_id: { type: "string" },
          channel_id: { type: "string" },
          due_at: { type: "string" }
        },
        required: ["action"]
      }
    }
  },
  effect: "write",
  execute: async (args, context) => {
    const todos = cairnContext().todos
    const text = (value: unknown) => (typeof value === "string" && value.trim() ? value : undefined)
    switch (args.action) {
      case "list":
        return JSON.stringify(
          await todos.list({
            status: args.status === "done" ? "done" : "open",
            ...(text(args.bot_id) ? { botId: text(args.bot_id)! } : {}),
            ...(text(args.channel_id) ? { channelId: text(args.channel_id)! } : {})
          })
        )
      case "add": {
        const title = text(args.title)
        if (!title) return "Error: add needs a title"
        return JSON.stringify(
          await todos.add({
            title,
            ...(text(args.notes) ? { notes: text(args.notes)! } : {}),
            botId: text(args.bot_id) ?? context.botId,
            ...(text(args.channel_id) ?? context.channelId ? { channelId: (text(args.channel_id) ?? context.channelId)! } : {}),
            ...(text(args.due_at) ? { dueAt: text(args.due_at)! } : {})
          })
        )
      }
      case "complete":
        if (!text(args.id)) return "Error: complete needs the todo's id"
        return JSON.stringify(await todos.complete(text(args.id)!))
      default:
        return "Error: action is one of list, add, complete"
    }
  }
})
