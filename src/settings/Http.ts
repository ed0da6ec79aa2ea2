import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { SettingsList } from "./Model.ts"
import { Settings } from "./Settings.ts"

export const SettingsHttpLive = HttpApiBuilder.group(CairnApi, "settings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const list = (views: ReadonlyArray<SettingsList["settings"][number]>) => new SettingsList({ settings: views })
    return handlers
      .handle("list", () => settings.views.pipe(Effect.map(list)))
      .handle("update", ({ payload }) => settings.update(payload).pipe(Effect.map(list)))
      .handle("reset", ({ path }) => settings.reset(path.key).pipe(Effect.map(list)))
  }))
