/**
 * The shipped price table: USD per million input (prompt) and output (completion) tokens, list
 * prices of common models. A price set on a provider's model overrides it. Models named with a
 * vendor prefix ("openai/gpt-4o" on a router) are looked up by their last segment.
 */
export interface Price {
  readonly inputPerMillion: number
  readonly outputPerMillion: number
  /** Prompt tokens read from the provider's cache; unknown: the input price (no discount assumed). */
  readonly cacheReadPerMillion?: number
  /** Prompt tokens written to the provider's cache; unknown: the input price. */
  readonly cacheWritePerMillion?: number
}

const p = (inputPerMillion: number, outputPerMillion: number, cacheReadPerMillion?: number, cacheWritePerMillion?: number): Price => ({
  inputPerMillion,
  outputPerMillion,
  ...(cacheReadPerMillion !== undefined ? { cacheReadPerMillion } : {}),
  ...(cacheWritePerMillion !== undefined ? { cacheWritePerMillion } : {})
})

export const shippedPrices: ReadonlyMap<string, Price> = new Map([
  // OpenAI: cached input is read at a discount, writing it costs nothing extra.
  ["gpt-4o", p(2.5, 10, 1.25)],
  ["gpt-4o-mini", p(0.15, 0.6, 0.075)],
  ["gpt-4.1", p(2, 8, 0.5)],
  ["gpt-4.1-mini", p(0.4, 1.6, 0.1)],
  ["gpt-4.1-nano", p(0.1, 0.4, 0.025)],
  ["gpt-5", p(1.25, 10, 0.125)],
  ["gpt-5-mini", p(0.25, 2, 0.025)],
  ["gpt-5-nano", p(0.05, 0.4, 0.005)],
  ["o3", p(2, 8, 0.5)],
  ["o3-mini", p(1.1, 4.4, 0.55)],
  ["o4-mini", p(1.1, 4.4, 0.275)],
  ["text-embedding-3-small", p(0.02, 0)],
  ["text-embedding-3-large", p(0.13, 0)],
  // Anthropic: a cache read is a tenth of the input price, a (5-minute) cache write 1.25 times it.
  ["claude-opus-4", p(15, 75, 1.5, 18.75)],
  ["claude-opus-4-1", p(15, 75, 1.5, 18.75)],
  ["claude-opus-4-5", p(5, 25, 0.5, 6.25)],
  ["claude-sonnet-4", p(3, 15, 0.3, 3.75)],
  ["claude-sonnet-4-5", p(3, 15, 0.3, 3.75)],
  ["claude-3-7-sonnet", p(3, 15, 0.3, 3.75)],
  ["claude-haiku-4-5", p(1, 5, 0.1, 1.25)],
  ["claude-3-5-haiku", p(0.8, 4, 0.08, 1)],
  // Gemini: implicit caching reads at a quarter (2.5) or a tenth (3) of the input price.
  ["gemini-2.5-pro", p(1.25, 10, 0.31)],
  ["gemini-2.5-flash", p(0.3, 2.5, 0.075)],
  ["gemini-2.5-flash-lite", p(0.1, 0.4, 0.025)],
  ["gemini-3-pro-preview", p(2, 12, 0.2)],
  ["deepseek-chat", p(0.27, 1.1, 0.07)],
  ["deepseek-reasoner", p(0.55, 2.19, 0.14)]
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

/** The table's keys, longest first: a dated or suffixed id takes the most specific entry it starts with. */
const byLength = [...shippedPrices.keys()].sort((a, b) => b.length - a.length)

/**
 * A model's shipped price: its id, else its last segment ("openai/gpt-4o" on a router), else the
 * longest entry its name starts with followed by "-" (a dated release, "claude-sonnet-4-5-20250929").
 */
export const shippedPrice = (model: string): Price | undefined => {
  const name = model.slice(model.lastIndexOf("/") + 1)
  const exact = shippedPrices.get(model) ?? shippedPrices.get(name)
  if (exact) return exact
  const key = byLength.find((candidate) => name.startsWith(`${candidate}-`))
  return key === undefined ? undefined : shippedPrices.get(key)
}

/**
 * Cost in USD of a call, or null when the price is unknown or there is no usage. The prompt's
 * cached tokens are priced at the cache's read and write prices, the rest at the input price.
 */
export const costOf = (
  price: Price | undefined,
  usage:
    | {
      readonly prompt_tokens: number
      readonly completion_tokens: number
      readonly cache_read_tokens?: number
      readonly cache_write_tokens?: number
    }
    | null
): number | null => {
  if (!price || !usage) return null
  const read = usage.cache_read_tokens ?? 0
  const write = usage.cache_write_tokens ?? 0
  const uncached = Math.max(0, usage.prompt_tokens - read - write)
  return (
    uncached * price.inputPerMillion +
    read * (price.cacheReadPerMillion ?? price.inputPerMillion) +
    write * (price.cacheWritePerMillion ?? price.inputPerMillion) +
    usage.completion_tokens * price.outputPerMillion
  ) / 1_000_000
}
