import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApprovalDecided, ApprovalNotFound, ToolRequestNotFound } from "../agent/Errors.ts"
import { Authentication } from "../auth/Authentication.ts"
import { ChatRateLimited } from "../auth/ChatRateLimited.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { ChannelNotFound } from "../channels/Errors.ts"
import { BodyLimit } from "../contract/BodyLimit.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath, queryParams } from "../contract/Params.ts"
import { ProviderFailed } from "../providers/Errors.ts"
import { RunCancelled, RunFailed, RunInterrupted, SessionBusy } from "../runs/Errors.ts"
import { EventStream } from "../runs/Model.ts"
import { SessionNotFound } from "../sessions/Errors.ts"
import { Message } from "../sessions/Model.ts"
import { TaskNotFound } from "../tasks/Errors.ts"
import { InjectMessage, MessageInjected } from "../tasks/Model.ts"
import {
  Acknowledged,
  ApprovalDecision,
  ApprovalQuery,
  ApprovalView,
  CancelRequest,
  CancelResponse,
  ChatRequest,
  ChatResponse,
  DecideRequest,
  SessionSummary,
  SummaryVersion,
  ToolResultRequest
} from "./Model.ts"

/** A decision on a held tool call: one declaration for the inbox's two addresses. */
const decisionEndpoint = <const Name extends string>(name: Name, path: `/api/v1/approvals/${string}`, description: string) =>
  HttpApiEndpoint.post(name, path)
    .setPath(idPath("Approval"))
    .setPayload(DecideRequest)
    .addSuccess(ApprovalDecision)
    .annotate(RequiredScope, "approvals:write")
    .annotate(OpenApi.Description, description)

export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("chat", "/chat")
      .setPayload(ChatRequest)
      .addSuccess(ChatResponse)
      .addError(detailBody(RunCancelled))
      .addError(detailBody(RunFailed))
      .addError(detailBody(RunInterrupted))
      .addError(detailBody(SessionBusy))
      .annotate(BodyLimit, "files")
      .annotate(RequiredScope, "chat")
      .annotate(ChatRateLimited, true)
      .annotate(OpenApi.Description, "Send a message and wait for the bot's answer")
  )
  .add(
    HttpApiEndpoint.post("stream", "/chat/stream")
      .setPayload(ChatRequest)
      .addSuccess(EventStream)
      .addError(detailBody(SessionBusy))
      .annotate(BodyLimit, "files")
      .annotate(RequiredScope, "chat")
      .annotate(ChatRateLimited, true)
      .annotate(OpenApi.Description, "Send a message and stream the run as Server-Sent Events")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/chat/cancel")
      .setPayload(CancelRequest)
      .addSuccess(CancelResponse)
      .annotate(RequiredScope, "chat")
      .annotate(OpenApi.Description, "Cancel the session's run and its queued messages")
  )
  .add(
    HttpApiEndpoint.post("toolResult", "/chat/tool_result")
      .setPayload(ToolResultRequest)
      .addSuccess(Acknowledged)
      .annotate(RequiredScope, "chat")
      .annotate(OpenApi.Description, "Answer a client-side tool request (tool_request event)")
  )
  .add(
    HttpApiEndpoint.get("approvals", "/api/v1/approvals")
      .setUrlParams(ApprovalQuery)
      .addSuccess(Schema.Array(ApprovalView))
      .annotate(RequiredScope, "approvals:read")
      .annotate(
        OpenApi.Description,
        "Tool calls waiting for a decision (status pending, the default) or decided (approved, denied, expired), newest first; filter by session_id; limit 1-500 (default 100)"
      )
  )
  .add(
    decisionEndpoint("decide", "/api/v1/approvals/:id/decide", "Approve or deny a tool call a run is waiting on (approval_request event)")
  )
  .add(
    decisionEndpoint(
      "decideApproval",
      "/api/v1/approvals/:id",
      "The same as POST /api/v1/approvals/{id}/decide: the approval inbox's own address for a decision"
    )
  )
  .add(
    HttpApiEndpoint.post("summarize", "/sessions/:id/summarize")
      .setPath(idPath("Session"))
      .addSuccess(SessionSummary)
      .annotate(RequiredScope, "chat")
      .annotate(
        OpenApi.Description,
        "The session's model writes a title and a summary of the conversation so far; the summary is stored and sent to the model in place of the messages it covers (unversioned, for companion clients)"
      )
  )
  .add(
    HttpApiEndpoint.post("compact", "/api/v1/admin/sessions/:id/compact")
      .setPath(idPath("Session"))
      .addSuccess(SummaryVersion)
      .annotate(RequiredScope, "sessions:write")
      .annotate(
        OpenApi.Description,
        "Compact the session now: its oldest turns become its next summary version, the newest (COMPACTION_KEEP of the model's window) stay; 422 when there is nothing to compact"
      )
  )
  .add(
    HttpApiEndpoint.get("summaries", "/api/v1/admin/sessions/:id/summaries")
      .setPath(idPath("Session"))
      .addSuccess(Schema.Array(SummaryVersion))
      .annotate(RequiredScope, "sessions:read")
      .annotate(
        OpenApi.Description,
        "The session's summaries, oldest first: each version with the message range it covers and what made it"
      )
  )
  .addError(detailBody(BotNotFound))
  .addError(detailBody(ChannelNotFound))
  .addError(detailBody(SessionNotFound))
  .addError(detailBody(TaskNotFound))
  .addError(detailBody(ToolRequestNotFound))
  .addError(detailBody(ApprovalNotFound))
  .addError(detailBody(ApprovalDecided))
  // A speech engine's failure on voice input, or a summary the model did not write.
  .addError(detailBody(ProviderFailed))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Chat")
{}

/** A channel's conversation (its active session): read it, or post into it as the integrations do. */
export class ChannelMessagesApi extends HttpApiGroup.make("channelMessages")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/channels/:id/messages")
      .setPath(idPath("Channel"))
      .setUrlParams(queryParams({ limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))) }))
      .addSuccess(Schema.Array(Message))
      .annotate(RequiredScope, "channels.messages:read")
      .annotate(
        OpenApi.Description,
        "The newest messages (limit 1-1000, default 100) of the channel's active session, oldest first; none before it has one"
      )
  )
  .add(
    HttpApiEndpoint.post("post", "/api/v1/channels/:id/messages")
      .setPath(idPath("Channel"))
      .setPayload(InjectMessage)
      .addSuccess(MessageInjected)
      .annotate(BodyLimit, "files")
      .annotate(RequiredScope, "channels.messages:write")
      .annotate(
        OpenApi.Description,
        "Store a user message in the channel's active session (made when missing); with run_agent, queue a task that runs the agent on it"
      )
  )
  .addError(detailBody(ChannelNotFound))
  // A channel whose bot or session vanished under it.
  .addError(detailBody(BotNotFound))
  .addError(detailBody(SessionNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Channels")
{}
