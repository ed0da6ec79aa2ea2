/**
 * `POST /sessions/{id}/summarize` and the admin's compaction: the session's model writes a title and
 * a summary, stored as the session's next summary version; context assembly sends the current one
 * in place of the messages it covers (see agent/Compaction.ts).
 */
import { Effect } from "effect"
import { Compaction, type SummaryUnwritten } from "../agent/Compaction.ts"
import { contextConfig, historyWindow } from "../agent/LlmStep.ts"
import type { PrincipalShape } from "../auth/Principal.ts"
import { Bots } from "../bots/Bots.ts"
import { Channels } from "../channels/Channels.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { ValidationError } from "../contract/Errors.ts"
import { ProviderFailed } from "../providers/Errors.ts"
import { httpError } from "../providers/Http.ts"
import type { Session } from "../sessions/Model.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"

/** No summary written is the provider's failure: a 502. */
const unwritten = (error: SummaryUnwritten) => new ProviderFailed({ detail: error.detail })

export class Summaries extends Effect.Service<Summaries>()("cairn/Summaries", {
  effect: Effect.gen(function*() {
    const sessions = yield* Sessions
    const bots = yield* Bots
    const channels = yield* Channels
    const compaction = yield* Compaction
    const context = yield* contextConfig
    const { defaultModel } = yield* AppConfig

    /** Whether the session's passive messages join its summaries (its channel's passive_memory). */
    const passiveMemoryOf = (session: Session) =>
      session.channel_id
        ? channels.get(session.channel_id).pipe(
          Effect.map((channel) => channel.passive_memory),
          Effect.catchTag("ChannelNotFound", () => Effect.succeed(false))
        )
        : Effect.succeed(false)

    /** The whole conversation so far, summarised (the companion clients' summarize). */
    const summarize = (principal: PrincipalShape, sessionId: string) =>
      Effect.gen(function*() {
        const session = yield* sessions.reach(principal, sessionId)
        const bot = yield* bots.get(session.bot_id)
        const passiveMemory = yield* passiveMemoryOf(session)
        const stored = yield* compaction
          .summarize(sessionId, bot, { passiveMemory, trigger: "summarize", foldPrevious: false })
          .pipe(Effect.catchTags({ SummaryUnwritten: unwritten, LlmError: httpError }))
        if (!stored) return yield* ValidationError.single(["path", "id"], "The session has no messages to summarize", "empty_session")
        return { title: stored.title, summary: stored.summary }
      })

    /** Compacts now, as the turn would past its threshold: the oldest turns into the summary. */
    const compact = (principal: PrincipalShape, sessionId: string) =>
      Effect.gen(function*() {
        const session = yield* sessions.reach(principal, sessionId)
        const bot = yield* bots.get(session.bot_id)
        const window = historyWindow(context, bot.model ?? defaultModel)
        const passiveMemory = yield* passiveMemoryOf(session)
        const history = yield* sessions.recent(sessionId, 10_000)
        const compacted = yield* compaction
          .compactIfNeeded(sessionId, bot, history, window, passiveMemory, "admin")
          .pipe(Effect.catchTags({ SummaryUnwritten: unwritten, LlmError: httpError }))
        if (!compacted) {
          return yield* ValidationError.single(["path", "id"], "Nothing to compact: the history is one turn or less", "nothing_to_compact")
        }
        return compacted
      })

    return traced("Summaries", { summarize, compact } as const)
  }),
  dependencies: [Sessions.Default, Bots.Default, Channels.Default, Compaction.Default]
}) {}
