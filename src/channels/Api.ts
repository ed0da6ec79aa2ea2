import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath, queryParams } from "../contract/Params.ts"
import { ChannelConflict, ChannelNotFound } from "./Errors.ts"
import {
  Channel,
  ChannelConfig,
  ChannelList,
  ChannelPage,
  CreateChannel,
  defaultListLimit,
  EnsureChannel,
  maxListLimit,
  UpdateChannel
} from "./Model.ts"

const channelId = idPath("Channel")

const listQuery = queryParams({
  bot_id: Schema.optionalWith(Schema.String, { exact: true }),
  client_id: Schema.optionalWith(Schema.String, { exact: true }),
  /** Only the channels of this integration (by the client id prefix it registered). */
  integration: Schema.optionalWith(Schema.String, { exact: true }),
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxListLimit)), {
    default: () => defaultListLimit,
    exact: true
  }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()), { default: () => 0, exact: true })
})

export class ChannelsApi extends HttpApiGroup.make("channels")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/admin/channels")
      .setPayload(CreateChannel)
      .addSuccess(Channel, { status: 201 })
      .addError(detailBody(ChannelConflict))
      .annotate(RequiredScope, "channels:write")
      .annotate(OpenApi.Description, "Create a channel for a bot (client_id defaults to channel:<id>)")
  )
  .add(
    HttpApiEndpoint.post("ensure", "/api/v1/channels")
      .setPayload(EnsureChannel)
      .addSuccess(Channel)
      .annotate(RequiredScope, "channels:write")
      .annotate(OpenApi.Description, "Get the channel of (client_id, bot_id), creating it on first use")
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/channels")
      .setUrlParams(listQuery)
      .addSuccess(ChannelList)
      .annotate(RequiredScope, "channels:read")
      .annotate(
        OpenApi.Description,
        "List channels, oldest first, optionally only those of a bot_id, a client_id or an integration (by the client id prefix it registered); each names its integration, or null"
      )
  )
  .add(
    HttpApiEndpoint.get("adminList", "/api/v1/admin/channels")
      .setUrlParams(
        queryParams({
          bot_id: Schema.optionalWith(Schema.String, { exact: true }),
          page: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()), { default: () => 1, exact: true }),
          page_size: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxListLimit)), {
            default: () => 50,
            exact: true
          })
        })
      )
      .addSuccess(ChannelPage)
      .annotate(RequiredScope, "channels:read")
      .annotate(
        OpenApi.Description,
        "A page of channels, oldest first, with the total (the companion clients' list); optionally only a bot's"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/channels/:id")
      .setPath(channelId)
      .addSuccess(Channel)
      .annotate(RequiredScope, "channels:read")
      .annotate(OpenApi.Description, "Get one channel")
  )
  .add(
    HttpApiEndpoint.get("config", "/api/v1/channels/:id/config")
      .setPath(channelId)
      .addSuccess(ChannelConfig)
      .annotate(RequiredScope, "channels.config:read")
      .annotate(
        OpenApi.Description,
        "A channel's settings: require_mention, passive_memory, workspace_enabled, model_override, retrieval, integration_config"
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/v1/channels/:id")
      .setPath(channelId)
      .setPayload(UpdateChannel)
      .addSuccess(Channel)
      .annotate(RequiredScope, "channels.config:write")
      .annotate(
        OpenApi.Description,
        "Change a channel's settings: name, require_mention, passive_memory, workspace_enabled, model_override (only the fields sent)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/channels/:id")
      .setPath(channelId)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "channels:write")
      .annotate(OpenApi.Description, "Delete a channel (its sessions stay)")
  )
  .addError(detailBody(ChannelNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Channels")
{}
