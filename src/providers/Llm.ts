/**
 * Every LLM call of the server goes through here: the proxy, the agent loop and embeddings.
 * A call resolves its model to a provider, retries (`Retries.ts`), then tries the fallback models
 * in order, and records usage and cost for each model it tried. A stream that has already sent output is never retried.
 * Each attempt holds one of its provider's slots (`Gate.ts`: a limit with a fair wait across callers).
 * A chat call to a model first reserves its worst case on the budgets that apply (src/budgets/),
 * which may refuse it (`budget_exceeded`), and settles to what it used when it ends. A call made
 * outside any run (the proxy, an integration's) also holds a place of its credential's
 * RUNS_PER_CREDENTIAL_MAX, as a run does.
 */
import { Clock, Duration, Effect, Exit, Stream } from "effect"
import { overRunLimitDetail, RunSlots } from "../access/RunSlots.ts"
import { Budgets, type Held } from "../budgets/Budgets.ts"
import { BudgetExceeded } from "../budgets/Errors.ts"
import type { Cost } from "../budgets/Ledger.ts"
import { BudgetEmbeddings, RunsPerCredentialMax } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { traced } from "../telemetry/Spans.ts"
import { audioCostOf } from "../usage/Prices.ts"
import { Usage as UsageService } from "../usage/Usage.ts"
import { saysContextTooLong, type Transcribed } from "./Family.ts"
import { callerOf, ProviderGate } from "./Gate.ts"
import { layer as LlmConfigLayer, LlmConfig } from "./LlmConfig.ts"
import {
  type ChatRequest,
  type CompletionResult,
  type EmbedRequest,
  type EmbedResult,
  LlmError,
  type LlmFinished,
  type LlmStreamEvent,
  type ToolCall,
  type TranscribeRequest,
  type Usage,
  type UsageContext
} from "./Model.ts"
import { acceptsImages, costOf, priceOf, Providers, type Target } from "./Providers.ts"
import { llmRetries, retryDelayMs } from "./Retries.ts"
import { estimatedUsage, inputTokens, promptTokens } from "./TokenEstimate.ts"

const carriesImages = (request: ChatRequest) =>
  request.messages.some((message) => Array.isArray(message.content) && message.content.some((part) => part.type === "image_url"))

/**
 * A request with images for a model that takes none fails before it is sent, and a provider's
 * refusal of one says so: the run reports it instead of the images being dropped unseen.
 */
const imagesChecked = (target: Target, request: ChatRequest) => {
  if (!carriesImages(request)) return null
  if (!acceptsImages(target)) {
    return new LlmError({
      kind: "invalid_request",
      detail:
        `The model ${target.id} does not take images: send the message without attachments, or use a vision model (a provider's model entry can set vision: true)`
    })
  }
  return (error: LlmError) =>
    error.kind === "invalid_request"
      ? new LlmError({ ...error, detail: `The model ${target.id} did not accept the image attachments: ${error.detail}` })
      : error
}

/**
 * Fallback follows any failure but a request the provider rejected as invalid; a prompt too long
 * for the model is worth the next one, whose window may be larger.
 */
const fallsBack = (error: LlmError) =>
  error.kind !== "budget_exceeded" && (error.kind !== "invalid_request" || saysContextTooLong(error.detail))

/** A budget's refusal as the call's failure: a 429 until the period ends. */
const refusal = (error: BudgetExceeded) =>
  new LlmError({ kind: "budget_exceeded", status: 429, detail: error.detail, retryAfterSeconds: error.retryAfterSeconds })

/** A call's hold on its budgets and what it used, noted when its usage is recorded (nothing when it failed). */
interface Tab {
  readonly held: Held
  used: Cost
}

/** The failures that are the provider's, as opposed to a caller's own (`onEvents`'s). */
const isLlmError = (error: unknown): error is LlmError => error instanceof LlmError

export class Llm extends Effect.Service<Llm>()("cairn/Llm", {
  effect: Effect.gen(function*() {
    const providers = yield* Providers
    const config = yield* LlmConfig
    const usage = yield* UsageService
    const gate = yield* ProviderGate
    const budgets = yield* Budgets
    const slots = yield* RunSlots
    const settings = yield* Settings
    /** One attempt at `target` within one of its provider's slots, waiting in the caller's lane. */
    const inSlot = (target: Target, usage: UsageContext) => gate.withSlot(target.provider.id, callerOf(usage))

    const record = (
      context: UsageContext,
      target: { readonly providerId: string; readonly model: string },
      startedAt: number,
      outcome: { readonly usage: Usage | null; readonly cost: number | null; readonly audioSeconds?: number | null } | LlmError
    ) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const ok = !(outcome instanceof LlmError)
        const tokens = ok ? outcome.usage : null
        return usage.record({
          at: new Date(now),
          source: context.source,
          principalKind: context.principalKind ?? null,
          principalId: context.principalId ?? null,
          botId: context.botId ?? null,
          sessionId: context.sessionId ?? null,
          providerId: target.providerId,
          model: target.model,
          promptTokens: tokens?.prompt_tokens ?? 0,
          completionTokens: tokens?.completion_tokens ?? 0,
          totalTokens: tokens?.total_tokens ?? 0,
          cacheReadTokens: tokens?.cache_read_tokens ?? 0,
          cacheWriteTokens: tokens?.cache_write_tokens ?? 0,
          estimated: tokens?.estimated ?? false,
          audioSeconds: ok ? (outcome.audioSeconds ?? 0) : 0,
          costUsd: ok ? outcome.cost : null,
          durationMs: now - startedAt,
          outcome: ok ? "ok" : "error",
          errorKind: ok ? null : outcome.kind
        })
      })

    const where = (target: Target) => ({ providerId: target.provider.id, model: target.model })

    /**
     * A chat call's record. An answer without usage (many local servers send none; a stream may
     * end before it) is counted here and recorded as estimated; the caller is told what the
     * provider said.
     */
    const recordChat = (
      request: ChatRequest,
      target: Target,
      startedAt: number,
      reported: Usage | null,
      text: string,
      toolCalls: ReadonlyArray<ToolCall>,
      tab: Tab
    ) =>
      Effect.flatMap(reported ? Effect.succeed(reported) : estimatedUsage(request, text, toolCalls), (usage) => {
        const cost = costOf(priceOf(target), usage)
        tab.used = { tokens: usage.total_tokens, usd: cost ?? 0 }
        return record(request.usage, where(target), startedAt, { usage, cost })
      })

    /** The most a chat call to `target` can cost: its prompt and `max_tokens` (the configured default without one), priced. */
    const worstCase = (request: ChatRequest, target: Target): Effect.Effect<Cost> =>
      Effect.map(promptTokens(request), (prompt) => {
        const completion = request.max_tokens ?? config.defaultMaxTokens
        return {
          tokens: prompt + completion,
          usd: costOf(priceOf(target), { prompt_tokens: prompt, completion_tokens: completion }) ?? 0
        }
      })

    /**
     * `use` within the budgets' hold: the worst case reserved first (a refusal fails the call
     * before anything is sent), settled to what was recorded when it ends, however it ends.
     */
    const budgetedCall = <A, E>(
      usage: UsageContext,
      worst: Effect.Effect<Cost>,
      use: (tab: Tab) => Effect.Effect<A, E>
    ): Effect.Effect<A, E | LlmError> =>
      Effect.acquireUseRelease(
        Effect.mapBoth(
          // The usage context names the call's principal, user, bot and channel as a budget subject does.
          budgets.reserve(usage, worst),
          { onFailure: refusal, onSuccess: (held): Tab => ({ held, used: { tokens: 0, usd: 0 } }) }
        ),
        use,
        (tab) => tab.held.settle(tab.used)
      )
    const budgeted = <A, E>(request: ChatRequest, target: Target, use: (tab: Tab) => Effect.Effect<A, E>): Effect.Effect<A, E | LlmError> =>
      budgetedCall(request.usage, worstCase(request, target), use)

    /** Retries one provider call per the policy (blocking calls; streams retry in `streamModel`). */
    const retries = llmRetries(config)
    const retrying = <A>(attemptOnce: Effect.Effect<A, LlmError>): Effect.Effect<A, LlmError> => Effect.retry(attemptOnce, retries)

    /** Candidate `i` with its retries; on failure the next candidate, until none is left. */
    const completeFrom = (
      request: ChatRequest,
      candidates: ReadonlyArray<string>,
      i: number
    ): Effect.Effect<CompletionResult, LlmError> => {
      const modelId = candidates[i]!
      // Combinators rather than a generator: the proxy runs this on every call.
      const attempt = Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
        Effect.flatMap(providers.resolve(modelId), (target) => {
          const images = imagesChecked(target, request)
          if (images instanceof LlmError) return Effect.fail(images)
          return budgeted(request, target, (tab) =>
            retrying(inSlot(target, request.usage)(target.provider.family.chat(target, request))).pipe(
              Effect.mapError((error) => (images ? images(error) : error)),
              Effect.tapBoth({
                onSuccess: (result) =>
                  recordChat(request, target, startedAt, result.usage, result.content, result.toolCalls, tab),
                onFailure: (error) =>
                  record(request.usage, where(target), startedAt, error)
              })
            )).pipe(
              Effect.map((outcome): CompletionResult => {
                const result: CompletionResult = {
                  content: outcome.content,
                  model: target.id,
                  usage: outcome.usage,
                  toolCalls: outcome.toolCalls
                }
                return i === 0 ? result : { ...result, fallback: { originalModel: candidates[0]!, fallbackModel: modelId } }
              })
            )
        }))
      return Effect.catchAll(attempt, (error) => {
        if (!fallsBack(error) || i === candidates.length - 1) return Effect.fail(error)
        return Effect.logWarning("LLM model failed; trying the fallback model").pipe(
          Effect.annotateLogs({ model: candidates[i], fallback: candidates[i + 1], kind: error.kind, detail: error.detail }),
          Effect.zipRight(completeFrom(request, candidates, i + 1))
        )
      })
    }

    /**
     * A call made outside any run (the completion proxy, an integration's LLM access) holds one of
     * its credential's RUNS_PER_CREDENTIAL_MAX places while it lasts, as a run does: past the cap
     * it is refused (429) before anything is reserved or sent. A run's own calls are counted by
     * its place, not again.
     */
    const counted = <A>(usage: UsageContext, call: Effect.Effect<A, LlmError>): Effect.Effect<A, LlmError> => {
      if (usage.source !== "proxy" && usage.source !== "integration") return call
      const credential = usage.caller ?? `${usage.principalKind ?? usage.source}:${usage.principalId ?? ""}`
      return Effect.flatMap(settings.get(RunsPerCredentialMax), (max) =>
        Effect.acquireUseRelease(
          slots.take(credential, max),
          (slot) =>
            slot
              ? call
              : Effect.fail(new LlmError({ kind: "rate_limited", status: 429, detail: overRunLimitDetail(max), retryAfterSeconds: 1 })),
          (slot) => slot?.release ?? Effect.void
        ))
    }

    const complete = (request: ChatRequest): Effect.Effect<CompletionResult, LlmError> =>
      counted(request.usage, completeFrom(request, [request.model ?? providers.defaultModel, ...(request.fallbackModels ?? [])], 0))

    /**
     * One model with retries; a retry only happens while nothing has been sent. Not `llmRetries`:
     * the caller is told of a 429 wait (`RateLimitWait`) before it waits, and the decision depends
     * on what was already streamed. Usage is recorded once, when the call has ended.
     */
    const streamModel = <E>(
      target: Target,
      request: ChatRequest,
      startedAt: number,
      onEvents: (events: ReadonlyArray<LlmStreamEvent>) => Effect.Effect<void, E>
    ): Effect.Effect<LlmFinished, LlmError | E> => {
      const attempt = (n: number): Effect.Effect<LlmFinished, LlmError | E> =>
        Effect.suspend(() => {
          let sent = false
          const tracked = (events: ReadonlyArray<LlmStreamEvent>) => {
            sent = true
            return onEvents(events)
          }
          return inSlot(target, request.usage)(target.provider.family.chatStream(target, request, config.timeoutMs, tracked)).pipe(
            Effect.catchIf(isLlmError, (error) => {
              const delay = sent ? undefined : retryDelayMs(config, n, error)
              if (delay === undefined) return Effect.fail(error)
              const notice = error.kind === "rate_limited" ? onEvents([{ _tag: "RateLimitWait", waitSeconds: delay / 1000 }]) : Effect.void
              return notice.pipe(Effect.zipRight(Effect.sleep(Duration.millis(delay))), Effect.zipRight(attempt(n + 1)))
            })
          )
        })
      return budgeted(request, target, (tab) =>
        attempt(0).pipe(
          Effect.tapBoth({
            onSuccess: (finished) => recordChat(request, target, startedAt, finished.usage, finished.text, finished.toolCalls, tab),
            onFailure: (error) => (isLlmError(error) ? record(request.usage, where(target), startedAt, error) : Effect.void)
          })
        ))
    }

    /**
     * A streamed completion, its events handed to `onEvents` a batch at a time (the tokens that
     * arrived together), in order; answers `Finished`. The request's model first, then its
     * fallback models in order while nothing was sent (a `Fallback` event tells of the switch).
     * The agent's turns call it this way: a callback costs a token one step where a stream costs
     * one per stage.
     */
    const streamTo = <E>(
      request: ChatRequest,
      onEvents: (events: ReadonlyArray<LlmStreamEvent>) => Effect.Effect<void, E>
    ): Effect.Effect<LlmFinished, LlmError | E> => {
      const candidates = [request.model ?? providers.defaultModel, ...(request.fallbackModels ?? [])]
      const fromCandidate = (i: number): Effect.Effect<LlmFinished, LlmError | E> =>
        Effect.suspend(() => {
          let sent = false
          const tracked = (events: ReadonlyArray<LlmStreamEvent>) => {
            if (!sent) {
              sent = events.some((event) => event._tag === "TextDelta" || event._tag === "ToolCallDelta" || event._tag === "ReasoningDelta")
            }
            return onEvents(events)
          }
          const modelId = candidates[i]!
          return Effect.gen(function*() {
            const startedAt = yield* Clock.currentTimeMillis
            const target = yield* providers.resolve(modelId)
            const images = imagesChecked(target, request)
            if (images instanceof LlmError) return yield* images
            const call = streamModel(target, request, startedAt, tracked)
            return yield* images ? Effect.mapError(call, (error) => (isLlmError(error) ? images(error) : error)) : call
          }).pipe(
            Effect.catchIf(isLlmError, (error) => {
              if (sent || !fallsBack(error) || i === candidates.length - 1) return Effect.fail(error)
              return onEvents([{ _tag: "Fallback", originalModel: candidates[0]!, fallbackModel: candidates[i + 1]! }]).pipe(
                Effect.zipRight(fromCandidate(i + 1))
              )
            })
          )
        })
      return fromCandidate(0)
    }

    /** `streamTo` as a stream of its events, `Finished` last. */
    const stream = (request: ChatRequest): Stream.Stream<LlmStreamEvent, LlmError> =>
      Stream.asyncPush<LlmStreamEvent, LlmError>(
        (emit) =>
          Effect.forkScoped(
            streamTo(request, (events) => Effect.sync(() => void emit.array(events))).pipe(
              Effect.exit,
              Effect.map((exit) => (Exit.isSuccess(exit) ? (emit.single(exit.value), emit.end()) : emit.halt(exit.cause)))
            )
          ),
        { bufferSize: "unbounded" }
      )

    const embed = (request: EmbedRequest): Effect.Effect<EmbedResult, LlmError> =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const target = yield* providers.resolve(request.model, config.embeddingModel)
        if (request.input.length === 0) return { model: target.id, embeddings: [], usage: null }
        const call = (tab?: Tab) =>
          retrying(inSlot(target, request.usage)(target.provider.family.embed(target, request.input))).pipe(
            Effect.tap((r) => {
              const cost = costOf(priceOf(target), r.usage)
              if (tab && r.usage) tab.used = { tokens: r.usage.total_tokens, usd: cost ?? 0 }
              return record(request.usage, where(target), startedAt, { usage: r.usage, cost })
            }),
            Effect.tapError((error) => record(request.usage, where(target), startedAt, error))
          )
        // By setting (BUDGET_EMBEDDINGS), as a chat call: its input's tokens reserved first, settled to what it used.
        const result = (yield* settings.get(BudgetEmbeddings))
          ? yield* budgetedCall(
            request.usage,
            Effect.map(inputTokens(request.input), (tokens) => ({
              tokens,
              usd: costOf(priceOf(target), { prompt_tokens: tokens, completion_tokens: 0 }) ?? 0
            })),
            call
          )
          : yield* call()
        return { model: target.id, embeddings: result.embeddings, usage: result.usage }
      })

    /** Speech to text; usage counts the audio's seconds (the caller's, else what the provider reports). */
    const transcribe = (request: TranscribeRequest): Effect.Effect<Transcribed, LlmError> =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const target = yield* providers.resolve(request.model, config.transcriptionModel)
        const once = target.provider.family.transcribe(target, request.audio, request.fileName, request.mimeType)
        return yield* retrying(inSlot(target, request.usage)(once)).pipe(
          Effect.tap((result) => {
            const seconds = request.audioSeconds ?? result.durationSeconds
            return record(request.usage, where(target), startedAt, {
              usage: null,
              cost: audioCostOf(target.model, seconds),
              audioSeconds: seconds
            })
          }),
          Effect.tapError((error) => record(request.usage, where(target), startedAt, error))
        )
      })

    // Each call one span, `Llm.<method>`: the methods make none of their own.
    return traced("Llm", { complete, stream, streamTo, embed, transcribe } as const)
  }),
  dependencies: [
    Providers.Default,
    ProviderGate.Default,
    UsageService.Default,
    Budgets.Default,
    RunSlots.Default,
    Settings.Default,
    LlmConfigLayer
  ]
}) {}
