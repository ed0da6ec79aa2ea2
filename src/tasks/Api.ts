import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath } from "../contract/Params.ts"
import { SessionNotFound } from "../sessions/Errors.ts"
import { TaskConflict, TaskNotFound } from "./Errors.ts"
import { InjectMessage, MessageInjected, Task, TaskListQuery } from "./Model.ts"

const sessionPath = idPath("Session")
const taskPath = idPath("Task")

/** Messages put into a session from outside a chat; their group is separate from sessions/ on purpose. */
export class InjectionApi extends HttpApiGroup.make("injection")
  .add(
    HttpApiEndpoint.post("inject", "/api/v1/sessions/:id/messages")
      .setPath(sessionPath)
      .setPayload(InjectMessage)
      .addSuccess(MessageInjected)
      .annotate(RequiredScope, "sessions:write")
      .annotate(
        OpenApi.Description,
        "Store a user message in a session; with run_agent, queue a task that runs the agent on it (poll GET /api/v1/tasks/{id})"
      )
  )
  .addError(detailBody(SessionNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Injected messages")
{}

export class TasksApi extends HttpApiGroup.make("tasks")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/tasks")
      .setUrlParams(TaskListQuery)
      .addSuccess(Schema.Array(Task))
      .annotate(RequiredScope, "tasks:read")
      .annotate(OpenApi.Description, "Tasks, newest first; filter by status, session_id, bot_id (limit 1-500, default 50)")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/tasks/:id")
      .setPath(taskPath)
      .addSuccess(Task)
      .annotate(RequiredScope, "tasks:read")
      .annotate(OpenApi.Description, "A task: status, result or error, and the delivery of its result")
  )
  .add(
    // The companion clients read a task under the admin prefix, as the original server served it.
    HttpApiEndpoint.get("adminGet", "/api/v1/admin/tasks/:id")
      .setPath(taskPath)
      .addSuccess(Task)
      .annotate(RequiredScope, "tasks:read")
      .annotate(OpenApi.Description, "The same as GET /api/v1/tasks/{id} (the companion clients' path)")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/api/v1/tasks/:id/cancel")
      .setPath(taskPath)
      .addSuccess(Task)
      .addError(detailBody(TaskConflict))
      .annotate(RequiredScope, "tasks:write")
      .annotate(OpenApi.Description, "Cancel a pending task; a running or finished task is a 409")
  )
  .addError(detailBody(TaskNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Tasks")
{}
