import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { McpServers } from "./McpServers.ts"

export const McpHttpLive = HttpApiBuilder.group(CairnApi, "mcpServers", (handlers) =>
  Effect.gen(function*() {
    const servers = yield* McpServers
    return handlers
      .handle("list", () => servers.list())
      .handle("get", ({ path }) => servers.get(path.name))
      .handle("create", ({ payload }) => servers.create(payload))
      .handle("update", ({ path, payload }) => servers.update(path.name, payload))
      .handle("delete", ({ path }) => servers.remove(path.name))
      .handle("reconnect", ({ path }) => servers.reconnect(path.name))
  }))
