/**
 * The outlet of delegated answers (agent/Delegation.ts): where a conversation's messages go, and
 * the post itself. Where, the first that names one:
 * 1. the turn's own dispatch (its request's or its task's `dispatch_type`, unless `none`);
 * 2. its session's `dispatch_config` naming a `dispatch_type` (as an injected message's result);
 * 3. its channel's bindings, by the rule of the bound channel's dispatch config (bindings/Dispatch.ts).
 * None: nothing is posted. The post goes through that dispatcher's `postMessage`, shown as the bot
 * that answered: `username` and `icon_url` from the `user_attribution` of the integration whose
 * dispatch type it is (its bot's name without one), and the conversation's name from its
 * display-name resolver in `extra_metadata`.
 */
import { Effect, Option } from "effect"
import { type DelegatedPost, DelegationOutlets, type Destination } from "../../agent/Delegation.ts"
import type { TurnInput } from "../../agent/Turn.ts"
import { Bindings } from "../../bindings/Bindings.ts"
import { ClientPrefixes } from "../../channels/ClientPrefixes.ts"
import type { Attribution, IntegrationMetadata } from "../../sdk/index.ts"
import { Sessions } from "../../sessions/Sessions.ts"
import { traced } from "../../telemetry/Spans.ts"
import { sessionDispatch } from "../Injection.ts"
import { Dispatchers } from "./Dispatchers.ts"

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The integration's attribution of a bot; its name alone when it has none, answers none, or throws. */
const attributionOf = (metadata: IntegrationMetadata | undefined, bot: DelegatedPost["bot"]) =>
  Effect.try(() => metadata?.user_attribution?.(bot.id, { kind: "bot", id: bot.id, name: bot.name }) ?? null).pipe(
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning(`user_attribution of ${metadata?.integration_type} failed: ${errorText(error.error)}`), null)
    ),
    Effect.map((shown): Attribution =>
      shown && typeof shown.username === "string" && shown.username
        ? { username: shown.username, ...(typeof shown.icon_url === "string" && shown.icon_url ? { icon_url: shown.icon_url } : {}) }
        : { username: bot.name }
    )
  )

/** The conversation's name by the integration's display-name resolver; null without one. */
const displayNameOf = (metadata: IntegrationMetadata | undefined, clientId: string | undefined) =>
  metadata?.display_name && clientId
    ? Effect.tryPromise(async () => metadata.display_name!(clientId)).pipe(
      Effect.map((name) => (typeof name === "string" && name ? name : null)),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning(`display_name of ${metadata.integration_type} failed: ${errorText(error.error)}`), null)
      )
    )
    : Effect.succeed(null)

export class DelegatedPosts extends Effect.Service<DelegatedPosts>()("cairn/DelegatedPosts", {
  effect: Effect.gen(function*() {
    const dispatchers = yield* Dispatchers
    const sessions = yield* Sessions
    const bindings = yield* Bindings
    const prefixes = yield* ClientPrefixes
    const outlets = yield* DelegationOutlets

    const destination = (turn: TurnInput): Effect.Effect<Destination | undefined> =>
      Effect.gen(function*() {
        if (turn.dispatch && turn.dispatch.type !== "none") return turn.dispatch
        const session = yield* Effect.option(sessions.get(turn.sessionId))
        if (Option.isSome(session)) {
          const named = sessionDispatch(session.value.dispatch_config)
          if (named.type !== "none") return named
        }
        const channelId = turn.channel?.id ?? Option.getOrNull(session)?.channel_id
        const bound = channelId ? yield* bindings.dispatchOf(channelId) : null
        return bound ? { type: bound.type, config: bound.config, clientId: bound.client_id } : undefined
      })

    const post = (delegated: DelegatedPost) =>
      Effect.gen(function*() {
        const metadata = prefixes.metadataOfDispatchType(delegated.destination.type)
        const shown = yield* attributionOf(metadata, delegated.bot)
        const conversation = yield* displayNameOf(metadata, delegated.destination.clientId)
        return yield* dispatchers.postMessage(delegated.destination.type, delegated.destination.config, delegated.text, {
          botId: delegated.bot.id,
          username: shown.username,
          iconUrl: shown.icon_url,
          extraMetadata: {
            delegation: {
              target_bot: delegated.bot.id,
              asked_by: delegated.askedBy,
              session_id: delegated.sessionId,
              ...(conversation ? { conversation } : {})
            }
          }
        })
      })

    const service = traced("DelegatedPosts", { destination, post } as const)
    yield* outlets.install(service)
    return service
  }),
  dependencies: [Dispatchers.Default, Sessions.Default, Bindings.Default, ClientPrefixes.Default, DelegationOutlets.Default]
}) {}
