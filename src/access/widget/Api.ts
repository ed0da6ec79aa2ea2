import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../../auth/Authentication.ts"
import { RequiredScope } from "../../auth/RequiredScope.ts"
import { BotNotFound } from "../../bots/Errors.ts"
import { detailBody } from "../../contract/Errors.ts"
import { WidgetKeyUnusable } from "./Errors.ts"
import { MintWidgetToken, WidgetToken } from "./Model.ts"

export class WidgetApi extends HttpApiGroup.make("widget")
  .add(
    HttpApiEndpoint.post("mint", "/widget-auth/mint")
      .setPayload(MintWidgetToken)
      .addSuccess(WidgetToken)
      .addError(detailBody(WidgetKeyUnusable))
      .annotate(RequiredScope, "bots:read")
      .annotate(
        OpenApi.Description,
        "Mint a 15-minute widget token for a bot; its scopes are copied from the bot's API key (the caller must hold them too). Re-mint every 12 minutes."
      )
  )
  .addError(detailBody(BotNotFound))
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(OpenApi.Title, "Widget tokens")
{}
