import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { Channels } from "../channels/Channels.ts"
import { Intake } from "../intake/Intake.ts"
import { requireBotAllowed } from "../sessions/Access.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Dispatchers } from "../tasks/delivery/Dispatchers.ts"
import { injectionOf, Injector } from "../tasks/Injection.ts"
import { MessageInjected } from "../tasks/Model.ts"

export const ChannelMessagesHttpLive = HttpApiBuilder.group(CairnApi, "channelMessages", (handlers) =>
  Effect.gen(function*() {
    const channels = yield* Channels
    const sessions = yield* Sessions
    const chat = yield* Intake
    const injector = yield* Injector
    const dispatchers = yield* Dispatchers

    /** The channel, when the caller may use its bot (a widget token only its own). */
    const allowed = (channelId: string) =>
      Effect.gen(function*() {
        const channel = yield* channels.get(channelId)
        yield* requireBotAllowed(yield* Principal, channel.bot_id)
        return channel
      })

    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const channel = yield* allowed(path.id)
          if (!channel.active_session_id) return []
          return yield* sessions.channelMessages(channel.active_session_id, urlParams.limit ?? 100)
        }))
      .handle("post", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* allowed(path.id)
          yield* dispatchers.requireKnown(payload.dispatch_type)
          const { session } = yield* chat.channelSession(path.id)
          return new MessageInjected(yield* injector.inject(session.id, injectionOf(payload)))
        }))
  }))
