/**
 * Token counts for a call whose provider reported none (many local servers do not, and streams
 * that broke off never say): counted with OpenAI's o200k tokenizer, a close estimate for other
 * models' tokenizers too, and marked `estimated` in the usage record. The tokenizer's tables are
 * loaded on first need, not at startup.
 */
import { Effect } from "effect"
import { textOf } from "./Family.ts"
import type { ChatRequest, ToolCall, Usage } from "./Model.ts"

/** The chat format's framing per message (role, separators), as OpenAI counts it. */
const perMessage = 4

let tokenizer: Promise<(text: string) => number> | undefined
const countOf = () => {
  tokenizer ??= import("gpt-tokenizer/encoding/o200k_base").then((module) => (text: string) => module.countTokens(text))
  return tokenizer
}

const countPrompt = (count: (text: string) => number, request: ChatRequest) => {
  let prompt = 0
  for (const message of request.messages) {
    prompt += perMessage + count(textOf(message.content))
    for (const call of message.tool_calls ?? []) prompt += count(call.function.name) + count(call.function.arguments)
  }
  for (const tool of request.tools ?? []) prompt += count(JSON.stringify(tool.function))
  return prompt
}

/** The request's prompt tokens, counted before it is sent (a budget reserves them). */
export const promptTokens = (request: ChatRequest): Effect.Effect<number> =>
  Effect.promise(async () => countPrompt(await countOf(), request))

/** The tokens of texts to embed, counted before they are sent (a budget reserves them when BUDGET_EMBEDDINGS is on). */
export const inputTokens = (input: ReadonlyArray<string>): Effect.Effect<number> =>
  Effect.promise(async () => {
    const count = await countOf()
    return input.reduce((sum, text) => sum + count(text), 0)
  })

export const estimatedUsage = (request: ChatRequest, text: string, toolCalls: ReadonlyArray<ToolCall>): Effect.Effect<Usage> =>
  Effect.promise(async () => {
    const count = await countOf()
    const prompt = countPrompt(count, request)
    let completion = count(text)
    for (const call of toolCalls) completion += count(call.name) + count(call.arguments)
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated: true }
  })
