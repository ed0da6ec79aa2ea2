import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { UsageQuery, UsageReport } from "./Model.ts"

export class UsageApi extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("report", "/api/v1/admin/usage")
      .setUrlParams(UsageQuery)
      .addSuccess(UsageReport)
      .annotate(RequiredScope, "usage:read")
      .annotate(
        OpenApi.Description,
        "LLM usage and cost for a range (`from` inclusive, `to` exclusive, ISO date-times; default the last 30 days): totals and breakdowns by model, bot, key and UTC day"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Usage")
{}
