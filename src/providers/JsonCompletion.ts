/**
 * Asking a model for JSON, as every operation that reads a model's JSON answer does (summaries and
 * compaction, reranking, integrations' `json` completions). JSON mode first; the same request
 * without it when the provider refuses `response_format` itself (a 400 that says so, whichever
 * provider it is); the answer read tolerantly (`JsonAnswer.ts`); and when it is still not the JSON
 * wanted, asked once more, without JSON mode, with the answer and what was wrong with it. What an
 * operation does with an answer that never decoded is its own documented fallback: this answers
 * the last text the model gave, for it.
 */
import { Effect, Either, Option, type Schema } from "effect"
import { tracedFn } from "../telemetry/Spans.ts"
import { readJsonAnswer, withoutThinking } from "./JsonAnswer.ts"
import type { ChatMessage, ChatRequest, CompletionResult, LlmError, Usage } from "./Model.ts"

/** The `Llm` service's `complete`, or anything that answers as it does. */
export type Complete = (request: ChatRequest) => Effect.Effect<CompletionResult, LlmError>

export interface JsonAnswered<A> {
  /** The decoded answer; none when neither answer was the JSON wanted. */
  readonly value: Option.Option<A>
  /** The text of the answer decoded, else the last one that was not empty; `<think>` blocks removed. */
  readonly text: string
  /** The model of the last answer. */
  readonly model: string
  /** The calls' usage summed; null when none reported any. */
  readonly usage: Usage | null
}

/** A refusal of JSON mode itself ("response_format is not supported"): any provider's, told by its words. */
export const refusesJsonMode = (error: LlmError): boolean => error.kind === "invalid_request" && /response_format|json/i.test(error.detail)

const withJsonMode = (request: ChatRequest): ChatRequest => ({
  ...request,
  extra: { ...request.extra, response_format: { type: "json_object" } }
})

const withoutJsonMode = (request: ChatRequest): ChatRequest => {
  if (request.extra === undefined) return request
  const { response_format: _, ...extra } = request.extra
  return { ...request, extra }
}

/** The request again, with the model's answer and a user message saying what is wrong and what is wanted. */
const askingAgain = (request: ChatRequest, answer: string, problem: string, shape: string): ChatRequest => {
  const said: Array<ChatMessage> = answer.trim() === "" ? [] : [{ role: "assistant", content: answer }]
  return {
    ...withoutJsonMode(request),
    messages: [
      ...request.messages,
      ...said,
      {
        role: "user",
        content: `Your answer was not the JSON asked for: ${problem}. Answer again with only a JSON object of this shape, ` +
          `and no other text before or after it: ${shape}`
      }
    ]
  }
}

const sumUsage = (results: ReadonlyArray<CompletionResult>): Usage | null => {
  const reported = results.flatMap((result) => (result.usage ? [result.usage] : []))
  if (reported.length === 0) return null
  return reported.reduce((sum, usage) => ({
    prompt_tokens: sum.prompt_tokens + usage.prompt_tokens,
    completion_tokens: sum.completion_tokens + usage.completion_tokens,
    total_tokens: sum.total_tokens + usage.total_tokens
  }))
}

/**
 * A JSON answer of `schema`'s shape from the model. `shape` is how the model is told the shape when
 * it is asked again (an example reads better to a model than a JSON Schema). Fails only when the
 * first call fails; a failed second call leaves the first answer's text for the fallback.
 */
export const completeJson = tracedFn(
  "JsonCompletion.complete",
  <A, I>(
    complete: Complete,
    request: ChatRequest,
    schema: Schema.Schema<A, I>,
    options: { readonly shape: string }
  ): Effect.Effect<JsonAnswered<A>, LlmError> =>
    Effect.gen(function*() {
      const read = readJsonAnswer(schema)
      const plain = withoutJsonMode(request)
      const first = yield* complete(withJsonMode(request)).pipe(
        Effect.catchIf(refusesJsonMode, (error) =>
          Effect.logDebug("The provider refused JSON mode; asking without it").pipe(
            Effect.annotateLogs({ detail: error.detail }),
            Effect.zipRight(complete(plain))
          ))
      )
      const answered = (value: Option.Option<A>, text: string, results: ReadonlyArray<CompletionResult>): JsonAnswered<A> => ({
        value,
        text: withoutThinking(text),
        model: results.at(-1)!.model,
        usage: sumUsage(results)
      })
      const decoded = read(first.content)
      if (Either.isRight(decoded)) return answered(Option.some(decoded.right), first.content, [first])
      const second = yield* Effect.either(complete(askingAgain(plain, first.content, decoded.left, options.shape)))
      if (Either.isLeft(second)) {
        yield* Effect.logWarning("Asking the model again for JSON failed", second.left)
        return answered(Option.none(), first.content, [first])
      }
      const again = read(second.right.content)
      const lastText = withoutThinking(second.right.content) === "" ? first.content : second.right.content
      return answered(Either.getRight(again), Either.isRight(again) ? second.right.content : lastText, [first, second.right])
    })
)
