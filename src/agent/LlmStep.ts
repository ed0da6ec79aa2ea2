/**
 * One call to the model within a turn: assemble the context from the stored history and the plan,
 * stream the answer while reporting its deltas as events, and fire the hooks around the call.
 * Deciding what the answer means (done, or tools to run) is the loop's.
 */
import { Config, Effect, Option, Ref } from "effect"
import { Hooks } from "../hooks/Hooks.ts"
import { Journal } from "../logs/Journal.ts"
import { Llm } from "../providers/Llm.ts"
import type { ChatMessage, LlmFinished, LlmStreamEvent } from "../providers/Model.ts"
import { Providers } from "../providers/Providers.ts"
import { traced } from "../telemetry/Spans.ts"
import { Compaction } from "./Compaction.ts"
import { assemble, contextWindowFor, defaultToolResultLimit } from "./Context.ts"
import type { AgentEvent } from "./Events.ts"
import type { TurnPlan } from "./Plan.ts"
import { describeOrigin, type ExternalOrigin, externalOrigins, storedOrigin } from "./Provenance.ts"
import { CurrentTurn } from "./Turn.ts"

export interface LlmAnswer {
  readonly finished: LlmFinished
  /** The streamed text (the final chunk may carry it whole instead). */
  readonly text: string
  readonly reasoning: string
  readonly fallbackModel: string | null
  /**
   * The outside content in the context this answer was made from (agent/Provenance.ts): its tool
   * calls are held to the bot's `untrusted_policy` when there is any. Counted over every row read,
   * trimmed or not: the policy errs toward holding a call.
   */
  readonly origins: ReadonlyArray<ExternalOrigin>
}

export const contextConfig = Config.all({
  answerReserveTokens: Config.integer("ANSWER_RESERVE_TOKENS").pipe(Config.withDefault(4096)),
  historyLimit: Config.integer("HISTORY_MESSAGES").pipe(Config.withDefault(200)),
  contextWindow: Config.option(Config.integer("CONTEXT_WINDOW")),
  toolResultLimit: Config.integer("TOOL_RESULT_MAX_CHARS").pipe(Config.withDefault(defaultToolResultLimit))
})

/** The tokens a model's window leaves for the history and prompt: CONTEXT_WINDOW or the model's, less the answer's reserve. */
export const historyWindow = (config: Config.Config.Success<typeof contextConfig>, model: string) =>
  Option.getOrElse(config.contextWindow, () => contextWindowFor(model)) - config.answerReserveTokens

/** What the model is told when the iteration guard ends tool use. */
const finalPassNotice: ChatMessage = { role: "system", content: "Tool use is over for this turn. Answer now with what you have." }

/** A model call's text and reasoning so far, and the fallback model in use, as its events arrive. */
interface StreamedSoFar {
  text: string
  reasoning: string
  fallbackModel: string | null
}

/** A batch of the model's events (the tokens that arrived together) as the run's events, in order. */
const runEventsOf = (soFar: StreamedSoFar, batch: ReadonlyArray<LlmStreamEvent>): Array<AgentEvent> => {
  const out: Array<AgentEvent> = []
  for (const event of batch) {
    switch (event._tag) {
      case "TextDelta":
        soFar.text += event.text
        out.push({ type: "assistant_text", text: soFar.text, delta: event.text })
        break
      case "ReasoningDelta":
        soFar.reasoning += event.text
        out.push({ type: "thinking_content", text: soFar.reasoning, delta: event.text })
        break
      case "RateLimitWait":
        out.push({ type: "rate_limit_wait", wait_seconds: event.waitSeconds })
        break
      case "Fallback":
        soFar.fallbackModel = event.fallbackModel
        soFar.text = ""
        out.push({ type: "fallback", original_model: event.originalModel, fallback_model: event.fallbackModel })
        break
      case "ToolCallDelta":
      case "Finished":
        break
    }
  }
  return out
}

export class LlmStep extends Effect.Service<LlmStep>()("cairn/LlmStep", {
  effect: Effect.gen(function*() {
    const llm = yield* Llm
    const compaction = yield* Compaction
    const hooks = yield* Hooks
    const config = yield* contextConfig
    const journal = yield* Journal
    const providers = yield* Providers
    /** The provider a model id goes to ("default" for a bare id, as routing decides), for the hooks. */
    const providerOf = (model: string) =>
      providers.resolve(model).pipe(
        Effect.map((target) => target.provider.id),
        Effect.orElseSucceed(() => null)
      )

    /** The stored history a call sees: before the turn's first, past the threshold, the oldest turns become the summary. */
    const historyFor = (plan: TurnPlan, iteration: number) =>
      Effect.gen(function*() {
        const turn = yield* CurrentTurn
        const history = yield* turn.record.recent(config.historyLimit)
        if (iteration !== 1 || !turn.record.stored) return history
        const window = historyWindow(config, plan.model)
        const compacted = yield* compaction
          .compactIfNeeded(turn.input.sessionId, turn.input.bot, history, window, turn.input.channel?.passive_memory ?? false)
          .pipe(
            Effect.catchAll((error) => Effect.as(Effect.logWarning("Compaction failed; the oldest turns are cut instead", error), null))
          )
        return compacted ? yield* turn.record.recent(config.historyLimit) : history
      })

    /**
     * One model call. `finalPass` offers no tools and asks for an answer; `partial` follows the
     * streamed text, so an interrupted turn can store what was said; `nudge` is said to the model
     * after the history, unstored (the loop's word after an empty answer).
     */
    const call = (
      plan: TurnPlan,
      iteration: number,
      finalPass: boolean,
      partial: Ref.Ref<string>,
      nudge?: ChatMessage
    ) =>
      Effect.gen(function*() {
        const turn = yield* CurrentTurn
        const { bot, emit, sessionId } = turn.input
        const history = yield* historyFor(plan, iteration)
        const context = assemble({
          bot,
          model: plan.model,
          history,
          skills: plan.skills,
          preamble: plan.preamble,
          channel: turn.input.channel ?? undefined,
          reserve: config.answerReserveTokens,
          limit: Option.getOrUndefined(config.contextWindow),
          toolResultLimit: config.toolResultLimit
        })
        const origins = externalOrigins([...plan.origins, ...history.map((row) => storedOrigin(row.origin))])
        yield* emit({ type: "context_budget", used: context.used, limit: context.limit, retrieval: plan.retrievalTokens })
        const offered = finalPass ? [] : plan.toolSchemas
        yield* hooks.fire("before_llm_call", {
          ...turn.hookIds,
          extra: {
            model: plan.model,
            message_count: context.messages.length,
            tools_count: offered.length,
            provider_id: yield* providerOf(plan.model),
            iteration
          }
        })
        const started = Date.now()
        const soFar: StreamedSoFar = { text: "", reasoning: "", fallbackModel: null }
        yield* Ref.set(partial, "")
        const toRunEvents = (batch: ReadonlyArray<LlmStreamEvent>) => {
          const out = runEventsOf(soFar, batch)
          return out.length === 0 ? Effect.void : Effect.zipRight(Ref.set(partial, soFar.text), emit(...out))
        }
        const streamed = llm.streamTo(
          {
            model: plan.model,
            messages: finalPass || nudge
              ? [...context.messages, ...(finalPass ? [finalPassNotice] : []), ...(nudge ? [nudge] : [])]
              : context.messages,
            tools: offered.length > 0 ? offered : undefined,
            temperature: bot.temperature ?? undefined,
            fallbackModels: bot.fallback_models,
            ...(turn.input.llmExtra ? { extra: turn.input.llmExtra } : {}),
            ...(bot.thinking_budget_tokens > 0 ? { thinkingBudgetTokens: bot.thinking_budget_tokens } : {}),
            usage: turn.usage
          },
          toRunEvents
        )
        const finished = yield* journal.span(
          {
            correlationId: turn.input.runId,
            kind: "llm",
            name: plan.model,
            botId: bot.id,
            sessionId,
            attributes: {
              iteration,
              messages: context.messages.length,
              tools_offered: offered.length,
              ...(origins.length > 0 ? { untrusted_origins: origins.map(describeOrigin) } : {})
            }
          },
          streamed,
          (done) => ({
            attributes: {
              model: done.model,
              prompt_tokens: done.usage?.prompt_tokens ?? 0,
              completion_tokens: done.usage?.completion_tokens ?? 0,
              total_tokens: done.usage?.total_tokens ?? 0,
              tool_calls: done.toolCalls.length,
              ...(soFar.fallbackModel ? { fallback_model: soFar.fallbackModel } : {})
            }
          })
        )
        yield* hooks.fire("after_llm_call", {
          ...turn.hookIds,
          extra: {
            model: finished.model,
            duration_ms: Date.now() - started,
            prompt_tokens: finished.usage?.prompt_tokens ?? null,
            completion_tokens: finished.usage?.completion_tokens ?? null,
            total_tokens: finished.usage?.total_tokens ?? null,
            tool_calls_count: finished.toolCalls.length,
            fallback_used: soFar.fallbackModel !== null,
            fallback_model: soFar.fallbackModel,
            iteration,
            provider_id: yield* providerOf(finished.model)
          }
        })
        return { finished, ...soFar, origins } satisfies LlmAnswer
      })

    return traced("LlmStep", { call } as const)
  }),
  dependencies: [Compaction.Default, Hooks.Default, Journal.Default, Llm.Default, Providers.Default]
}) {}
