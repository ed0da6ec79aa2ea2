import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { AUTHENTICATED } from "../auth/Scopes.ts"
import { queryParams } from "../contract/Params.ts"
import { EndpointEntry, ScopeCatalogue } from "./Model.ts"

export class DiscoverApi extends HttpApiGroup.make("discover")
  .add(
    HttpApiEndpoint.get("discover", "/discover")
      .setUrlParams(queryParams({ detail: Schema.optional(Schema.BooleanFromString) }))
      .addSuccess(Schema.Array(EndpointEntry))
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(
        OpenApi.Description,
        "The endpoints the caller's credentials may use (method, path, description, scope); with detail=true a markdown API reference of them instead (text/markdown)"
      )
  )
  .add(
    HttpApiEndpoint.get("scopes", "/scopes")
      .addSuccess(ScopeCatalogue)
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(OpenApi.Description, "The scope catalogue: groups with descriptions, implications and presets")
  )
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(OpenApi.Title, "Discovery")
{}
