import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../auth/Authentication.ts"
import { RequiredScope } from "../../auth/RequiredScope.ts"
import { BotNotFound } from "../../bots/Errors.ts"
import { detailBody } from "../../contract/Errors.ts"
import { indexedText, pathParams, queryParams } from "../../contract/Params.ts"
import { WidgetKeyUnusable } from "./Errors.ts"
import { MintWidgetToken, UpdateWidgetSettings, WidgetConversation, WidgetSettings, WidgetToken } from "./Model.ts"

const botPath = pathParams({ bot_id: Schema.String })
const conversationQuery = queryParams({
  bot_id: Schema.String.pipe(Schema.minLength(1)),
  client_id: indexedText("client_id").pipe(Schema.minLength(1))
})

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
  .add(
    HttpApiEndpoint.get("settings", "/admin/widgets/:bot_id")
      .setPath(botPath)
      .addSuccess(WidgetSettings)
      .annotate(RequiredScope, "bots:read")
      .annotate(
        OpenApi.Description,
        "A bot's widget settings: the origins allowed to embed it (its own, and WIDGET_EMBED_ORIGINS for every bot)"
      )
  )
  .add(
    HttpApiEndpoint.put("setOrigins", "/admin/widgets/:bot_id")
      .setPath(botPath)
      .setPayload(UpdateWidgetSettings)
      .addSuccess(WidgetSettings)
      .annotate(RequiredScope, "bots:write")
      .annotate(
        OpenApi.Description,
        "Replace the origins allowed to embed a bot's widget: {allowed_origins}; the next page load on a listed site shows the widget, no restart"
      )
  )
  .add(
    HttpApiEndpoint.get("conversation", "/widget/conversation")
      .setUrlParams(conversationQuery)
      .addSuccess(WidgetConversation)
      .annotate(RequiredScope, "chat")
      .annotate(
        OpenApi.Description,
        "The caller's conversation for (client_id, bot_id), its user and assistant lines oldest first: a widget shows it again after the host page reloads"
      )
  )
  .addError(detailBody(BotNotFound))
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(OpenApi.Title, "Widget tokens")
{}
