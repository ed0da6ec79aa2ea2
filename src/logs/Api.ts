/** `/api/v1/admin/logs`, `/tool-calls`, `/traces/{correlation_id}` and `/log-level`: what the agent did, and how much the server says. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { pathParams } from "../contract/Params.ts"
import { TraceNotFound } from "./Errors.ts"
import { LogLevelBody, LogTailQuery, LogTailStream, ToolCallPage, ToolCallQuery, Trace, TurnLogPage, TurnLogQuery } from "./Model.ts"

export class LogsApi extends HttpApiGroup.make("logs")
  .add(
    HttpApiEndpoint.get("turns", "/api/v1/admin/logs")
      .setUrlParams(TurnLogQuery)
      .addSuccess(TurnLogPage)
      .annotate(RequiredScope, "logs:read")
      .annotate(
        OpenApi.Description,
        "Agent turns, newest first: bot, session, model, tokens, LLM calls, tools used, duration, outcome (complete, failed, cancelled) and error; filter by bot_id, session_id, outcome, since, until; page with limit (1-500, default 50) and offset (the answer's next_offset)"
      )
  )
  .add(
    HttpApiEndpoint.get("stream", "/api/v1/admin/logs/stream")
      .setUrlParams(LogTailQuery)
      .addSuccess(LogTailStream)
      .annotate(RequiredScope, "logs:read")
      .annotate(
        OpenApi.Description,
        "This process's log lines as they are written (Server-Sent Events), masked: filter by level (the least severe shown) and q (text, case-insensitive); after (or the Last-Event-ID header) or since replays the last 500 lines kept first. A reader too slow to keep up gets a `skipped` event counting the lines it lost; `: keepalive` every 15 s; the stream ends at shutdown"
      )
  )
  .add(
    HttpApiEndpoint.get("toolCalls", "/api/v1/admin/tool-calls")
      .setUrlParams(ToolCallQuery)
      .addSuccess(ToolCallPage)
      .annotate(RequiredScope, "logs:read")
      .annotate(
        OpenApi.Description,
        "The tool-call audit, newest first: tool, arguments (credential-like values masked), result size, duration, error; filter by tool, bot_id, session_id, correlation_id, errors=true, since, until; limit and offset"
      )
  )
  .add(
    HttpApiEndpoint.get("trace", "/api/v1/admin/traces/:correlation_id")
      .setPath(pathParams({ correlation_id: Schema.String }))
      .addSuccess(Trace)
      .addError(detailBody(TraceNotFound))
      .annotate(RequiredScope, "logs:read")
      .annotate(
        OpenApi.Description,
        "Every span of one turn (its correlation id is the run id): the turn, each LLM call (model, tokens), each tool call and each hook fired, nested by parent_id"
      )
  )
  .add(
    HttpApiEndpoint.get("getLevel", "/api/v1/admin/log-level")
      .addSuccess(LogLevelBody)
      .annotate(RequiredScope, "logs:read")
      .annotate(OpenApi.Description, "The running log level of this server process")
  )
  .add(
    HttpApiEndpoint.put("setLevel", "/api/v1/admin/log-level")
      .setPayload(LogLevelBody)
      .addSuccess(LogLevelBody)
      .annotate(RequiredScope, "logs:write")
      .annotate(
        OpenApi.Description,
        "Change the running log level (trace, debug, info, warning, error, fatal, none) of this process at once, without a restart; LOG_LEVEL sets it again at the next start"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Logs")
{}
