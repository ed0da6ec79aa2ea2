import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { orInternal } from "../http/Internal.ts"
import { Bots } from "./Bots.ts"
import { BotList } from "./Model.ts"

export const BotsHttpLive = HttpApiBuilder.group(CairnApi, "bots", (handlers) =>
  Effect.gen(function* () {
    const bots = yield* Bots
    return handlers
      .handle("list", () => bots.list.pipe(Effect.map((list) => new BotList({ bots: list })), orInternal))
      .handle("get", ({ path }) => orInternal(bots.get(path.id)))
      .handle("create", ({ payload }) => orInternal(bots.create(payload)))
      .handle("update", ({ path, payload }) => orInternal(bots.update(path.id, payload)))
      .handle("delete", ({ path }) => orInternal(bots.remove(path.id)))
      .handle("legacyList", () => orInternal(bots.list))
  })
)
