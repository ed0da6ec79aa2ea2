import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath, queryParams } from "../contract/Params.ts"
import { SessionNotFound } from "./Errors.ts"
import {
  CreateSession,
  ForkSession,
  ImportSession,
  Message,
  Session,
  SessionCreated,
  SessionExport,
  SessionFamily,
  SessionSearchResults,
  SessionWithMessages,
  UpdateSession,
  UpdateSessionState
} from "./Model.ts"

const sessionPath = idPath("Session")
const listQuery = queryParams({
  bot_id: Schema.optional(Schema.String),
  client_id: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))),
  /** `true`: only the archived sessions; otherwise only those not archived. */
  archived: Schema.optional(Schema.BooleanFromString),
  /** `true`: only the caller's own sessions, whatever surface made them (a caller reaching every session too). */
  mine: Schema.optional(Schema.BooleanFromString)
})
const searchQuery = queryParams({
  q: Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(200)),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)))
})

export class SessionsApi extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/sessions")
      .setPayload(CreateSession)
      .addSuccess(SessionCreated)
      .annotate(RequiredScope, "sessions:write")
      .annotate(OpenApi.Description, "Create the session for (client_id, bot_id), or return the existing one")
  )
  .add(
    HttpApiEndpoint.get("search", "/api/v1/sessions/search")
      .setUrlParams(searchQuery)
      .addSuccess(SessionSearchResults)
      .annotate(RequiredScope, "sessions:read")
      .annotate(
        OpenApi.Description,
        "The caller's sessions whose title or messages match q (full text), pinned first, each with the words around its first matching message"
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/v1/sessions/:id")
      .setPath(sessionPath)
      .setPayload(UpdateSessionState)
      .addSuccess(Session)
      .annotate(RequiredScope, "sessions:write")
      .annotate(OpenApi.Description, "Rename, pin or unpin, archive or restore a session (only the fields sent change)")
  )
  .add(
    HttpApiEndpoint.post("fork", "/api/v1/sessions/:id/fork")
      .setPath(sessionPath)
      .setPayload(ForkSession)
      .addSuccess(Session)
      .annotate(RequiredScope, "sessions:write")
      .annotate(
        OpenApi.Description,
        "A branch of the conversation holding its messages before message_id, with its title and settings (edit and resend, regenerate)"
      )
  )
  .add(
    HttpApiEndpoint.get("family", "/api/v1/sessions/:id/branches")
      .setPath(sessionPath)
      .addSuccess(SessionFamily)
      .annotate(RequiredScope, "sessions:read")
      .annotate(OpenApi.Description, "The conversation the session belongs to and its branches the caller reaches, oldest first")
  )
  .add(
    HttpApiEndpoint.get("export", "/api/v1/sessions/:id/export")
      .setPath(sessionPath)
      .addSuccess(SessionExport)
      .annotate(RequiredScope, "sessions:read")
      .annotate(
        OpenApi.Description,
        "The conversation whole as JSON (cairn.session/1): its settings and messages, tool calls and results included"
      )
  )
  .add(
    HttpApiEndpoint.post("import", "/api/v1/sessions/import")
      .setPayload(ImportSession)
      .addSuccess(Session)
      .annotate(RequiredScope, "sessions:write")
      .annotate(OpenApi.Description, "A conversation exported as JSON stored as a new one of the caller's, on the bot and client_id named")
  )
  .add(
    HttpApiEndpoint.get("messages", "/api/v1/sessions/:id/messages")
      .setPath(sessionPath)
      .addSuccess(Schema.Array(Message))
      .annotate(RequiredScope, "sessions:read")
      .annotate(OpenApi.Description, "A session's messages, oldest first")
  )
  .add(
    HttpApiEndpoint.get("legacyList", "/sessions")
      .setUrlParams(listQuery)
      .addSuccess(Schema.Array(Session))
      .annotate(RequiredScope, "sessions:read")
      .annotate(OpenApi.Description, "List sessions, most recently active first (unversioned)")
  )
  .add(
    HttpApiEndpoint.get("legacyGet", "/sessions/:id")
      .setPath(sessionPath)
      .addSuccess(SessionWithMessages)
      .annotate(RequiredScope, "sessions:read")
      .annotate(OpenApi.Description, "A session with its messages (unversioned)")
  )
  .add(
    HttpApiEndpoint.patch("legacyUpdate", "/sessions/:id")
      .setPath(sessionPath)
      .setPayload(UpdateSession)
      .addSuccess(Session)
      .annotate(RequiredScope, "sessions:write")
      .annotate(OpenApi.Description, "Rename a session: {title} (unversioned)")
  )
  .add(
    HttpApiEndpoint.del("legacyDelete", "/sessions/:id")
      .setPath(sessionPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "sessions:write")
      .annotate(OpenApi.Description, "Delete a session and its messages (unversioned)")
  )
  .addError(detailBody(SessionNotFound))
  .addError(detailBody(BotNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sessions")
{}
