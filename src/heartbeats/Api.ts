/** `/api/v1/channels/{id}/heartbeat`: a channel's periodic prompt, its runs, and "run now". */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { ChannelNotFound } from "../channels/Errors.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath } from "../contract/Params.ts"
import { SessionNotFound } from "../sessions/Errors.ts"
import { HeartbeatNotFound } from "./Errors.ts"
import { Heartbeat, HeartbeatBody, HeartbeatRun, HeartbeatRunsQuery } from "./Model.ts"

const channelPath = idPath("Channel")

export class HeartbeatsApi extends HttpApiGroup.make("heartbeats")
  .add(
    HttpApiEndpoint.get("get", "/api/v1/channels/:id/heartbeat")
      .setPath(channelPath)
      .addSuccess(Heartbeat)
      .annotate(RequiredScope, "channels.heartbeat:read")
      .annotate(OpenApi.Description, "The channel's heartbeat, with its next slot (404 when it has none)")
  )
  .add(
    HttpApiEndpoint.put("put", "/api/v1/channels/:id/heartbeat")
      .setPath(channelPath)
      .setPayload(HeartbeatBody)
      .addSuccess(Heartbeat)
      .annotate(RequiredScope, "channels.heartbeat:write")
      .annotate(
        OpenApi.Description,
        "Set the channel's heartbeat: {prompt, interval_seconds | cron, timezone, quiet_start/quiet_end (HH:MM local), ends_at, enabled, only_when_something, catch_up, dispatch_type, dispatch_config}. The channel's bot answers the prompt on each slot as a task in the channel's session; the answer is posted with the dispatcher's post_message (not when only_when_something and the bot has nothing to report)"
      )
  )
  .add(
    HttpApiEndpoint.get("runs", "/api/v1/channels/:id/heartbeat/runs")
      .setPath(channelPath)
      .setUrlParams(HeartbeatRunsQuery)
      .addSuccess(Schema.Array(HeartbeatRun))
      .annotate(RequiredScope, "channels.heartbeat:read")
      .annotate(
        OpenApi.Description,
        "The heartbeat's runs, newest first: slot, trigger (schedule, catch_up, manual), status (running, posted, silent, quiet, failed), task, answer; limit 1-500 (default 50)"
      )
  )
  .add(
    HttpApiEndpoint.post("runNow", "/api/v1/channels/:id/heartbeat/run")
      .setPath(channelPath)
      .addSuccess(HeartbeatRun, { status: 202 })
      .annotate(RequiredScope, "channels.heartbeat:write")
      .annotate(OpenApi.Description, "Run the heartbeat now, outside its schedule (quiet hours do not hold it back)")
  )
  .addError(detailBody(HeartbeatNotFound))
  .addError(detailBody(ChannelNotFound))
  .addError(detailBody(BotNotFound))
  .addError(detailBody(SessionNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Heartbeats")
{}
