import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Bots } from "./Bots.ts"
import { BotList } from "./Model.ts"

export const BotsHttpLive = HttpApiBuilder.group(CairnApi, "bots", (handlers) =>
  Effect.gen(function* () {
    const bots = yield* Bots
    return handlers
      .handle("list", () => Effect.map(bots.list, (list) => new BotList({ bots: list })))
      .handle("get", ({ path }) => bots.get(path.id))
      .handle("create", ({ payload }) => bots.create(payload))
      .handle("update", ({ path, payload }) => bots.update(path.id, payload))
      .handle("delete", ({ path }) => bots.remove(path.id))
      .handle("legacyList", () => bots.list)
  })
)
