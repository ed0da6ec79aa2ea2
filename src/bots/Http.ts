import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Bots } from "./Bots.ts"
import { Bot, BotList } from "./Model.ts"

export const BotsHttpLive = HttpApiBuilder.group(CairnApi, "bots", (handlers) =>
  Effect.gen(function*() {
    const bots = yield* Bots
    const { defaultModel } = yield* AppConfig
    return handlers
      .handle("list", () => Effect.map(bots.list, (list) => new BotList({ bots: list })))
      .handle("get", ({ path }) => bots.get(path.id))
      .handle("create", ({ payload }) => bots.create(payload))
      .handle("update", ({ path, payload }) => bots.update(path.id, payload))
      .handle("delete", ({ path }) => bots.remove(path.id))
      // The companion clients show each bot's model: the one it runs on, DEFAULT_MODEL when it names none.
      .handle("legacyList", () =>
        Effect.map(bots.list, (list) => list.map((bot) => (bot.model ? bot : new Bot({ ...bot, model: defaultModel })))))
  }))
