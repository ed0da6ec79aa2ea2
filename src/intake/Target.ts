/**
 * The session a message goes to: by explicit id, by channel (its active session), or by
 * (client, bot). With a caller, the caller must reach it; the server's own callers pass none.
 */
import { Effect } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import { Channels } from "../channels/Channels.ts"
import { ValidationError } from "../contract/Errors.ts"
import { confinedBot, requireBotAllowed } from "../sessions/Access.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"
import type { ChatRequest } from "./Model.ts"

export class IntakeTarget extends Effect.Service<IntakeTarget>()("cairn/IntakeTarget", {
  effect: Effect.gen(function*() {
    const channels = yield* Channels
    const sessions = yield* Sessions

    /** A channel's session: its active one, else its (client, bot) session, made active. */
    const channelSession = (channelId: string, principal?: PrincipalShape) =>
      Effect.gen(function*() {
        const channel = yield* channels.get(channelId)
        if (principal) yield* requireBotAllowed(principal, channel.bot_id)
        const fresh = sessions.getOrCreate({ botId: channel.bot_id, clientId: channel.client_id, channelId: channel.id, principal })
        const session = channel.active_session_id
          ? yield* (principal ? sessions.reach(principal, channel.active_session_id) : sessions.get(channel.active_session_id)).pipe(
            Effect.catchTag("SessionNotFound", () => fresh)
          )
          : yield* fresh
        if (channel.active_session_id !== session.id) yield* channels.setActiveSession(channel.id, session.id)
        return { session, channel }
      })

    /**
     * The session a request addresses: by explicit id (it wins over a channel id; naming another
     * bot moves the session to it), by channel, or by (client_id, bot_id).
     */
    const resolve = (request: ChatRequest, principal: PrincipalShape) =>
      Effect.gen(function*() {
        if (request.bot_id !== undefined) yield* requireBotAllowed(principal, request.bot_id)
        if (request.session_id) {
          let session = yield* sessions.getOrCreateWithId(
            principal,
            request.session_id,
            request.client_id,
            request.bot_id ?? confinedBot(principal) ?? "default",
            null
          )
          if (request.bot_id !== undefined && session.bot_id !== request.bot_id) {
            session = yield* sessions.switchBot(session.id, request.bot_id)
          }
          const channel = session.channel_id
            ? yield* channels.get(session.channel_id).pipe(Effect.catchTag("ChannelNotFound", () => Effect.succeed(null)))
            : null
          return { session, channel }
        }
        if (request.channel_id) {
          return yield* channelSession(request.channel_id, principal).pipe(
            Effect.catchTag("ChannelNotFound", () => ValidationError.single(["body", "channel_id"], "Unknown channel"))
          )
        }
        const session = yield* sessions.getOrCreate({
          botId: request.bot_id ?? confinedBot(principal) ?? "default",
          clientId: request.client_id,
          dispatchConfig: request.dispatch_config,
          principal
        })
        return { session, channel: null }
      })

    return traced("IntakeTarget", { channelSession, resolve } as const)
  }),
  dependencies: [Channels.Default, Sessions.Default]
}) {}
