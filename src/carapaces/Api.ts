import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { ChannelNotFound } from "../channels/Errors.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath, pathParams } from "../contract/Params.ts"
import { CarapaceConflict, CarapaceNotFound } from "./Errors.ts"
import {
  Carapace,
  CarapaceList,
  ChannelCarapaces,
  CreateCarapace,
  ResolvedCarapaces,
  SetChannelCarapaces,
  UpdateCarapace
} from "./Model.ts"

const carapaceId = pathParams({ id: Schema.String })
const channelPath = idPath("Channel")

export class CarapacesApi extends HttpApiGroup.make("carapaces")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/carapaces")
      .addSuccess(CarapaceList)
      .annotate(RequiredScope, "carapaces:read")
      .annotate(OpenApi.Description, "List carapaces (capability bundles)")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/carapaces/:id")
      .setPath(carapaceId)
      .addSuccess(Carapace)
      .annotate(RequiredScope, "carapaces:read")
      .annotate(OpenApi.Description, "Get one carapace")
  )
  .add(
    HttpApiEndpoint.get("resolved", "/api/v1/carapaces/:id/resolved")
      .setPath(carapaceId)
      .addSuccess(ResolvedCarapaces)
      .addError(detailBody(CarapaceConflict))
      .annotate(RequiredScope, "carapaces:read")
      .annotate(
        OpenApi.Description,
        "A carapace with its includes followed: the carapaces reached and their tools and skills (409 on an include cycle)"
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/carapaces")
      .setPayload(CreateCarapace)
      .addSuccess(Carapace, { status: 201 })
      .addError(detailBody(CarapaceConflict))
      .annotate(RequiredScope, "carapaces:write")
      .annotate(OpenApi.Description, "Create a carapace; its includes must exist and form no cycle (422 naming the cycle)")
  )
  .add(
    HttpApiEndpoint.put("update", "/api/v1/carapaces/:id")
      .setPath(carapaceId)
      .setPayload(UpdateCarapace)
      .addSuccess(Carapace)
      .annotate(RequiredScope, "carapaces:write")
      .annotate(OpenApi.Description, "Change a carapace (only the fields sent); an include cycle is refused with 422")
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/carapaces/:id")
      .setPath(carapaceId)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(detailBody(CarapaceConflict))
      .annotate(RequiredScope, "carapaces:write")
      .annotate(OpenApi.Description, "Delete a carapace (409 while another includes it); its channel attachments go with it")
  )
  .add(
    HttpApiEndpoint.get("channelGet", "/api/v1/channels/:id/carapaces")
      .setPath(channelPath)
      .addSuccess(ChannelCarapaces)
      .annotate(RequiredScope, "carapaces:read")
      .annotate(OpenApi.Description, "The carapaces attached to a channel, in order")
  )
  .add(
    HttpApiEndpoint.put("channelSet", "/api/v1/channels/:id/carapaces")
      .setPath(channelPath)
      .setPayload(SetChannelCarapaces)
      .addSuccess(ChannelCarapaces)
      .annotate(RequiredScope, "carapaces:write")
      .annotate(OpenApi.Description, "Replace the carapaces attached to a channel; each must exist")
  )
  .addError(detailBody(CarapaceNotFound))
  .addError(detailBody(ChannelNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Carapaces")
{}
