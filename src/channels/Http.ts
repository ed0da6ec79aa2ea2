import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Channels } from "./Channels.ts"
import { ChannelConfig, ChannelList } from "./Model.ts"

export const ChannelsHttpLive = HttpApiBuilder.group(CairnApi, "channels", (handlers) =>
  Effect.gen(function*() {
    const channels = yield* Channels
    return handlers
      .handle("create", ({ payload }) => channels.create(payload))
      .handle("ensure", ({ payload }) =>
        channels.ensure(payload.client_id, payload.bot_id, payload.name).pipe(
          Effect.map(({ channel }) => channel)
        ))
      .handle("list", ({ urlParams }) =>
        channels.list(urlParams).pipe(
          Effect.map((list) => new ChannelList({ channels: list }))
        ))
      .handle("adminList", ({ urlParams }) => channels.page(urlParams))
      .handle("get", ({ path }) => channels.get(path.id))
      .handle("config", ({ path }) => Effect.map(channels.get(path.id), (channel) => new ChannelConfig(channel)))
      .handle("update", ({ path, payload }) => channels.update(path.id, payload))
      .handle("delete", ({ path }) => channels.remove(path.id))
  }))
