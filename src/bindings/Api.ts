import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { ChannelNotFound } from "../channels/Errors.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath } from "../contract/Params.ts"
import { BindingConflict, BindingNotFound } from "./Errors.ts"
import { Binding, BindingList, CreateBinding, UpdateBinding } from "./Model.ts"

const channelPath = idPath("Channel")
const bindingPath = idPath("Channel", {
  binding_id: Schema.UUID.annotations({ message: (issue) => `Binding not found: ${String(issue.actual)}` })
})

export class BindingsApi extends HttpApiGroup.make("bindings")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/channels/:id/integrations")
      .setPath(channelPath)
      .addSuccess(BindingList)
      .annotate(RequiredScope, "channels.integrations:read")
      .annotate(OpenApi.Description, "List the integration bindings of a channel, oldest first")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/channels/:id/integrations")
      .setPath(channelPath)
      .setPayload(CreateBinding)
      .addSuccess(Binding, { status: 201 })
      .addError(detailBody(BindingConflict))
      .annotate(RequiredScope, "channels.integrations:write")
      .annotate(
        OpenApi.Description,
        "Bind an integration to a channel under a client id `<prefix><external id>`; the same (type, client id) once per channel"
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/v1/channels/:id/integrations/:binding_id")
      .setPath(bindingPath)
      .setPayload(UpdateBinding)
      .addSuccess(Binding)
      .annotate(RequiredScope, "channels.integrations:write")
      .annotate(OpenApi.Description, "Change a binding's wake words, bot-name flag or HUD preset (only the fields sent)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/channels/:id/integrations/:binding_id")
      .setPath(bindingPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "channels.integrations:write")
      .annotate(OpenApi.Description, "Remove one binding from a channel")
  )
  .addError(detailBody(ChannelNotFound))
  .addError(detailBody(BindingNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Channel integrations")
{}
