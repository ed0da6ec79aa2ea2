import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { pathParams } from "../contract/Params.ts"
import { UnknownSetting } from "./Errors.ts"
import { SettingsList } from "./Model.ts"

export class SettingsApi extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("list", "/settings")
      .addSuccess(SettingsList)
      .annotate(RequiredScope, "settings:read")
      .annotate(OpenApi.Description, "List runtime settings with their current value and source")
  )
  .add(
    HttpApiEndpoint.put("update", "/settings")
      .setPayload(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
      .addSuccess(SettingsList)
      .annotate(RequiredScope, "settings:write")
      .annotate(OpenApi.Description, "Store new values for runtime settings (validated all at once)")
  )
  .add(
    HttpApiEndpoint.del("reset", "/settings/:key")
      .setPath(pathParams({ key: Schema.String }))
      .addSuccess(SettingsList)
      .annotate(RequiredScope, "settings:write")
      .annotate(OpenApi.Description, "Forget a stored value so the environment or default applies again")
  )
  .addError(detailBody(UnknownSetting))
  .middleware(Authentication)
  .prefix("/api/v1/admin")
  .annotate(OpenApi.Title, "Settings")
{}
