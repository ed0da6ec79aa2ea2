/** `/api/v1/todos`: the todos of the bots, which their `todos` tool keeps too. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath } from "../contract/Params.ts"
import { TodoNotFound } from "./Errors.ts"
import { CreateTodo, Todo, TodoQuery, UpdateTodo } from "./Model.ts"

const todoPath = idPath("Todo")

export class TodosApi extends HttpApiGroup.make("todos")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/todos")
      .setUrlParams(TodoQuery)
      .addSuccess(Schema.Array(Todo))
      .annotate(RequiredScope, "todos:read")
      .annotate(
        OpenApi.Description,
        "Todos, open ones first, oldest first; filter by bot_id, channel_id, status (open, done); limit 1-500 (default 100)"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/todos/:id").setPath(todoPath).addSuccess(Todo).annotate(RequiredScope, "todos:read").annotate(
      OpenApi.Description,
      "One todo"
    )
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/todos")
      .setPayload(CreateTodo)
      .addSuccess(Todo, { status: 201 })
      .annotate(RequiredScope, "todos:write")
      .annotate(OpenApi.Description, "Add a todo to a bot's list: {title, notes?, due_at?, bot_id? (default `default`), channel_id?}")
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/v1/todos/:id")
      .setPath(todoPath)
      .setPayload(UpdateTodo)
      .addSuccess(Todo)
      .annotate(RequiredScope, "todos:write")
      .annotate(OpenApi.Description, "Change a todo: any of {title, notes, status, due_at} (status done completes it, open reopens it)")
  )
  .add(
    HttpApiEndpoint.post("complete", "/api/v1/todos/:id/complete")
      .setPath(todoPath)
      .addSuccess(Todo)
      .annotate(RequiredScope, "todos:write")
      .annotate(OpenApi.Description, "Complete a todo (completing it again keeps its first completion time)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/todos/:id")
      .setPath(todoPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "todos:write")
      .annotate(OpenApi.Description, "Delete a todo")
  )
  .addError(detailBody(TodoNotFound))
  .addError(detailBody(BotNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Todos")
{}
