import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Inbound } from "./Inbound.ts"

export const DeadLettersHttpLive = HttpApiBuilder.group(CairnApi, "deadLetters", (handlers) =>
  Effect.gen(function*() {
    const inbound = yield* Inbound
    return handlers
      .handle("list", ({ urlParams }) =>
        inbound.deadLetters({
          ...(urlParams.source === undefined ? {} : { source: urlParams.source }),
          ...(urlParams.integration === undefined ? {} : { integration: urlParams.integration }),
          ...(urlParams.channel_id === undefined ? {} : { channelId: urlParams.channel_id }),
          ...(urlParams.limit === undefined ? {} : { limit: urlParams.limit })
        }))
      .handle("retry", ({ path }) => inbound.retry(path.id))
      .handle("discard", ({ path }) => inbound.discard(path.id))
  }))
