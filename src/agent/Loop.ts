/**
 * The agent loop: plan the turn, call the model, run the tools it asks for, repeat until it answers
 * in text (or the iteration guard stops it). Every step is reported as an event and every message
 * is stored as it happens, so an interrupted turn leaves a true record behind. The steps are their
 * own services (`TurnPlanner`, `LlmStep`, `ToolStep`); the turn's ids reach them as `CurrentTurn`.
 */
import { Effect, Ref } from "effect"
import { Hooks } from "../hooks/Hooks.ts"
import { type ChatMessage, LlmError, type ToolCall, type Usage } from "../providers/Model.ts"
import { detectSecrets } from "../secrets/Patterns.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"
import type { SkillNotFound } from "./Errors.ts"
import { LlmStep } from "./LlmStep.ts"
import { TurnPlanner } from "./Plan.ts"
import { memoryRecord, sessionRecord } from "./Record.ts"
import { clientActionsOf, ToolStep } from "./ToolStep.ts"
import { CurrentTurn, type TurnInput, type TurnRecord, type TurnResult, userMessage } from "./Turn.ts"

export { SkillNotFound } from "./Errors.ts"

const addUsage = (into: { prompt_tokens: number; completion_tokens: number; total_tokens: number }, usage: Usage | null) => {
  if (!usage) return
  into.prompt_tokens += usage.prompt_tokens
  into.completion_tokens += usage.completion_tokens
  into.total_tokens += usage.total_tokens
}

/**
 * Answers with tool calls that could not run (arguments that are no JSON object, a tool nobody
 * offered) a turn lets the model correct: each gets a tool result saying what was wrong. One more
 * ends the turn with an error.
 */
/** The tokens of the model call that wrote a message, kept with it (the chat shows them on hover). */
const tokensOf = (usage: Usage | null | undefined) =>
  usage ? { usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens } } : {}

export const maxToolCallRepairs = 2

/** Said to a model whose answer was empty (no text, no tool call), once; a second empty answer ends the turn. */
const emptyAnswerNudge: ChatMessage = {
  role: "user",
  content: "Your answer was empty. Please answer my last message (or call a tool if you need one)."
}

const isEmptyAnswer = (
  answer: { readonly finished: { readonly text: string; readonly toolCalls: ReadonlyArray<ToolCall> }; readonly text: string }
) => answer.finished.toolCalls.length === 0 && (answer.finished.text || answer.text).trim() === ""

export class AgentLoop extends Effect.Service<AgentLoop>()("cairn/AgentLoop", {
  effect: Effect.gen(function*() {
    const sessions = yield* Sessions
    const hooks = yield* Hooks
    const planner = yield* TurnPlanner
    const llmStep = yield* LlmStep
    const toolStep = yield* ToolStep

    /** Stores the user's message (warning about secrets in it) unless it is stored already. */
    const acceptUserText = (input: TurnInput, record: TurnRecord) =>
      Effect.gen(function*() {
        if (input.transcript !== undefined) yield* input.emit({ type: "transcript", text: input.transcript })
        if (input.userText === null) return
        const patterns = detectSecrets(input.userText)
        if (patterns.length > 0) yield* input.emit({ type: "secret_warning", patterns: patterns.map((type) => ({ type })) })
        if (input.userStored) return
        yield* record.append(
          userMessage({ runId: input.runId, text: input.userText, attachments: input.attachments, transcript: input.transcript })
        )
      })

    const runTurn = (input: TurnInput): Effect.Effect<TurnResult, SkillNotFound | LlmError> => {
      const record = input.history ? memoryRecord(input.history) : sessionRecord(sessions, input.sessionId, input.runId, input.withRunEnd)
      return Effect.gen(function*() {
        const { hookIds } = yield* CurrentTurn
        yield* acceptUserText(input, record)
        yield* hooks.fire("before_context_assembly", { ...hookIds, extra: { user_message: input.userText ?? "" } })
        const plan = yield* planner.plan(input)
        const toolsUsed: Array<string> = []
        const clientActions: Array<unknown> = []
        const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
        // Calls to tools the caller answers in its next request: the turn ends with them.
        let callerCalls: ReadonlyArray<ToolCall> = []
        // The streamed text of the current model call, stored if the turn is interrupted.
        const partial = yield* Ref.make("")

        /** One model call; an empty answer is asked for again once, and a second fails the turn (nothing empty is stored). */
        const answerOf = (iteration: number, finalPass: boolean) =>
          Effect.gen(function*() {
            const first = yield* llmStep.call(plan, iteration, finalPass, partial)
            addUsage(usage, first.finished.usage)
            if (!isEmptyAnswer(first)) return first
            const second = yield* llmStep.call(plan, iteration, finalPass, partial, emptyAnswerNudge)
            addUsage(usage, second.finished.usage)
            if (!isEmptyAnswer(second)) return second
            return yield* new LlmError({
              kind: "upstream",
              detail: "the model's answer was empty twice (no text, no tool call); no answer was stored"
            })
          })
        // Answers whose tool calls could not run so far (see maxToolCallRepairs).
        let repairs = 0

        const loop = Effect.gen(function*() {
          for (let iteration = 1;; iteration++) {
            const finalPass = iteration > input.bot.max_iterations
            const { finished, origins, reasoning, text } = yield* answerOf(iteration, finalPass)
            if (finished.toolCalls.length === 0 || finalPass) {
              const answer = finished.text || text
              // The turn's last write: it commits with the run's end, in that statement.
              yield* record.append(
                {
                  role: "assistant",
                  content: answer,
                  metadata: {
                    run_id: input.runId,
                    model: finished.model,
                    ...(reasoning ? { reasoning } : {}),
                    ...tokensOf(finished.usage)
                  }
                },
                { last: true }
              )
              return answer
            }
            yield* record.append(
              {
                role: "assistant",
                content: finished.text || null,
                tool_calls: finished.toolCalls.map((call) => ({
                  id: call.id,
                  type: "function" as const,
                  function: { name: call.name, arguments: call.arguments }
                })),
                // What the provider needs back in this tool loop (signed thinking, thought signatures).
                metadata: {
                  run_id: input.runId,
                  model: finished.model,
                  ...tokensOf(finished.usage),
                  ...(finished.providerState ? { provider_state: finished.providerState } : {})
                }
              },
              { durable: false }
            )
            callerCalls = finished.toolCalls.filter((call) => plan.callerAnswers.has(call.name))
            let malformed: string | null = null
            for (const call of finished.toolCalls) {
              if (plan.callerAnswers.has(call.name)) continue
              const ran = yield* toolStep.run(call, iteration, plan, runTurn, origins)
              if (ran.malformed) {
                malformed = ran.result
                continue
              }
              toolsUsed.push(call.name)
              clientActions.push(...clientActionsOf(ran.result))
            }
            // Every call has its result stored first, so the history stays whole for the next turn.
            if (malformed !== null && ++repairs > maxToolCallRepairs) {
              return yield* new LlmError({
                kind: "upstream",
                detail: `the model's tool calls could not run ${repairs} times in this turn; the last: ${malformed.replace(/^Error: /, "")}`
              })
            }
            if (callerCalls.length > 0) return finished.text || text
          }
        })

        // The partial answer of a stopped turn (a cancel, a shutdown, a lost lock) is its last
        // write: it commits with the run's end, fenced on it, so a run another process closed
        // (a lost lock) stores none (agent/Record.ts).
        const storePartialOnInterrupt = Effect.flatMap(
          Ref.get(partial),
          (text) =>
            record.append({ role: "assistant", content: text, metadata: { run_id: input.runId, cancelled: true } }, { last: true }).pipe(
              Effect.ignore
            )
        )
        const text = yield* loop.pipe(Effect.onInterrupt(() => storePartialOnInterrupt))
        if ((input.depth ?? 0) === 0) {
          yield* hooks.fire("after_response", { ...hookIds, extra: { response_length: text.length, tool_calls_made: toolsUsed.length } })
        }
        return { text, toolsUsed, clientActions, toolCalls: callerCalls, usage }
      }).pipe(Effect.provideService(CurrentTurn, CurrentTurn.forInput(input, record)))
    }

    return traced("AgentLoop", { runTurn } as const)
  }),
  dependencies: [TurnPlanner.Default, LlmStep.Default, ToolStep.Default, Hooks.Default, Sessions.Default]
}) {}
