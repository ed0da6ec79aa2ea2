import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../../Api.ts"
import { Principal } from "../../auth/Principal.ts"
import { Widgets } from "./Widgets.ts"

export const WidgetHttpLive = HttpApiBuilder.group(CairnApi, "widget", (handlers) =>
  Effect.gen(function*() {
    const widgets = yield* Widgets
    return handlers.handle("mint", ({ payload }) => Effect.flatMap(Principal, (caller) => widgets.mint(caller, payload)))
  }))
