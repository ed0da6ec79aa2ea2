/**
 * The shipped price table: USD per million input (prompt) and output (completion) tokens, list
 * prices of common models. A price set on a provider's model overrides it. Models named with a
 * vendor prefix ("openai/gpt-4o" on a router) are looked up by their last segment.
 */
export interface Price {
  readonly inputPerMillion: number
  readonly outputPerMillion: number
}

const p = (inputPerMillion: number, outputPerMillion: number): Price => ({ inputPerMillion, outputPerMillion })

export const shippedPrices: ReadonlyMap<string, Price> = new Map([
  ["gpt-4o", p(2.5, 10)],
  ["gpt-4o-mini", p(0.15, 0.6)],
  ["gpt-4.1", p(2, 8)],
  ["gpt-4.1-mini", p(0.4, 1.6)],
  ["gpt-4.1-nano", p(0.1, 0.4)],
  ["gpt-5", p(1.25, 10)],
  ["gpt-5-mini", p(0.25, 2)],
  ["gpt-5-nano", p(0.05, 0.4)],
  ["o3", p(2, 8)],
  ["o3-mini", p(1.1, 4.4)],
  ["o4-mini", p(1.1, 4.4)],
  ["text-embedding-3-small", p(0.02, 0)],
  ["text-embedding-3-large", p(0.13, 0)],
  ["claude-opus-4", p(15, 75)],
  ["claude-sonnet-4", p(3, 15)],
  ["claude-3-5-haiku", p(0.8, 4)],
  ["gemini-2.5-pro", p(1.25, 10)],
  ["gemini-2.5-flash", p(0.3, 2.5)],
  ["deepseek-chat", p(0.27, 1.1)],
  ["deepseek-reasoner", p(0.55, 2.19)]
])

/** USD per minute of audio of the common speech-to-text models (local engines cost nothing we know of). */
export const shippedAudioPricesPerMinute: ReadonlyMap<string, number> = new Map([
  ["whisper-1", 0.006],
  ["gpt-4o-transcribe", 0.006],
  ["gpt-4o-mini-transcribe", 0.003]
])

/** Cost in USD of transcribing `seconds` of audio with `model`, or null when its price is unknown. */
export const audioCostOf = (model: string, seconds: number | null): number | null => {
  const perMinute = shippedAudioPricesPerMinute.get(model) ?? shippedAudioPricesPerMinute.get(model.slice(model.lastIndexOf("/") + 1))
  return perMinute !== undefined && seconds !== null ? (perMinute * seconds) / 60 : null
}

export const shippedPrice = (model: string): Price | undefined =>
  shippedPrices.get(model) ?? shippedPrices.get(model.slice(model.lastIndexOf("/") + 1))

/** Cost in USD of a call, or null when the price is unknown or the provider reported no usage. */
export const costOf = (
  price: Price | undefined,
  usage: { readonly prompt_tokens: number; readonly completion_tokens: number } | null
): number | null =>
  price && usage
    ? (usage.prompt_tokens * price.inputPerMillion + usage.completion_tokens * price.outputPerMillion) / 1_000_000
    : null
