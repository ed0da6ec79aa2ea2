import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../../Api.ts"
import { Principal } from "../../auth/Principal.ts"
import { Widgets } from "./Widgets.ts"

export const WidgetHttpLive = HttpApiBuilder.group(CairnApi, "widget", (handlers) =>
  Effect.gen(function*() {
    const widgets = yield* Widgets
    return handlers
      .handle("mint", ({ payload }) => Effect.flatMap(Principal, (caller) => widgets.mint(caller, payload)))
      .handle("settings", ({ path }) => widgets.settings(path.bot_id))
      .handle("setOrigins", ({ path, payload }) => widgets.setOrigins(path.bot_id, payload))
      .handle("conversation", ({ urlParams }) =>
        Effect.flatMap(Principal, (caller) => widgets.conversation(caller, urlParams.bot_id, urlParams.client_id)))
  }))
