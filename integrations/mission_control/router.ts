/**
 * Mission control's routes: the dashboard, todos, and the workspace file proxy an external process
 * (the mailbox poller on another host, a script) writes channel files through, under the same path
 * rules as the workspace API (a path leaving the workspace is refused).
 */
import { defineRoutes, respond, type RouteRequest } from "../../src/sdk/index.ts"

const invalid = (loc: ReadonlyArray<string>, msg: string) => respond(422, { detail: [{ loc, msg, type: "value_error" }] })

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** A refusal of the workspace (a bad path, a disabled workspace, an unknown channel) as a 4xx. */
const refused = (error: unknown) => {
  const message = messageOf(error)
  return /not found/i.test(message)
    ? respond(404, { detail: message })
    : respond(422, { detail: [{ loc: ["query", "path"], msg: message, type: "value_error" }] })
}

/** The file's content: a text body, or JSON `{content}`. */
const contentOf = (request: RouteRequest): string | null => {
  const body = request.body
  if (typeof body === "string") return body
  if (body && typeof body === "object" && typeof (body as { content?: unknown }).content === "string") {
    return (body as { content: string }).content
  }
  return null
}

const pathOf = (request: RouteRequest) => (typeof request.query.path === "string" ? request.query.path : null)

export default defineRoutes([
  {
    method: "GET",
    path: "/dashboard",
    description:
      "The dashboard: channels with their last activity, active runs, queued and failed tasks, open todos, upcoming heartbeats, integration status",
    scope: "mission_control:read",
    handler: async (_request, cairn) => cairn.overview()
  },
  {
    method: "GET",
    path: "/todos",
    description: "The bots' todos (status open by default, or done; bot_id, channel_id)",
    scope: "mission_control:read",
    handler: async (request, cairn) => {
      const status = request.query.status === "done" ? "done" : "open"
      try {
        return await cairn.todos.list({
          status,
          ...(typeof request.query.bot_id === "string" ? { botId: request.query.bot_id } : {}),
          ...(typeof request.query.channel_id === "string" ? { channelId: request.query.channel_id } : {})
        })
      } catch (error) {
        return invalid(["query"], messageOf(error))
      }
    }
  },
  {
    method: "POST",
    path: "/todos",
    description: "Add a todo: {title, notes?, bot_id?, channel_id?, due_at?}",
    scope: "mission_control:write",
    handler: async (request, cairn) => {
      const body = (request.body ?? {}) as Record<string, unknown>
      if (typeof body.title !== "string" || !body.title.trim()) return invalid(["body", "title"], "A todo needs a title")
      try {
        const todo = await cairn.todos.add({
          title: body.title,
          ...(typeof body.notes === "string" ? { notes: body.notes } : {}),
          ...(typeof body.bot_id === "string" ? { botId: body.bot_id } : {}),
          ...(typeof body.channel_id === "string" ? { channelId: body.channel_id } : {}),
          ...(typeof body.due_at === "string" ? { dueAt: body.due_at } : {})
        })
        return respond(201, todo)
      } catch (error) {
        return invalid(["body"], messageOf(error))
      }
    }
  },
  {
    method: "POST",
    path: "/todos/:id/complete",
    description: "Complete a todo",
    scope: "mission_control:write",
    handler: async (request, cairn) => {
      try {
        return await cairn.todos.complete(request.params.id!)
      } catch (error) {
        return respond(404, { detail: messageOf(error) })
      }
    }
  },
  {
    method: "GET",
    path: "/channels/:id/workspace/files/content",
    description: "Read a channel workspace file (?path=) through the proxy",
    // Any channel's files: the workspace's own scope, not only mission control's.
    scope: "workspaces.files:read",
    handler: async (request, cairn) => {
      const path = pathOf(request)
      if (!path) return invalid(["query", "path"], "A path is required")
      try {
        return { path, content: await cairn.workspace.read(request.params.id!, path) }
      } catch (error) {
        return refused(error)
      }
    }
  },
  {
    method: "PUT",
    path: "/channels/:id/workspace/files/content",
    description:
      "Write a channel workspace file (?path=; the body is the text, or JSON {content}) for an external process, under the workspace path rules",
    scope: "workspaces.files:write",
    handler: async (request, cairn) => {
      const path = pathOf(request)
      if (!path) return invalid(["query", "path"], "A path is required")
      const content = contentOf(request)
      if (content === null) return invalid(["body"], "Send the file as the body (text), or JSON {content}")
      try {
        await cairn.workspace.write(request.params.id!, path, content)
        return { path, size: Buffer.byteLength(content) }
      } catch (error) {
        return refused(error)
      }
    }
  }
])
