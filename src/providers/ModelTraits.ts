/** What Cairn knows of a model it calls: its price (the provider's entry, else the shipped table) and whether it takes images. */
import { costOf, type Price, shippedPrice } from "../usage/Prices.ts"
import type { Target } from "./Providers.ts"

/** The price of a target: the provider's own model entry, else the shipped table. */
export const priceOf = (target: Target): Price | undefined => {
  const configured = target.provider.models.find((m) => m.id === target.model)
  const shipped = shippedPrice(target.model)
  if (
    !configured ||
    (configured.input_price_per_million === null && configured.output_price_per_million === null &&
      configured.cache_read_price_per_million === null && configured.cache_write_price_per_million === null)
  ) return shipped
  const input = configured.input_price_per_million ?? shipped?.inputPerMillion ?? 0
  // A cache price not set here keeps the shipped one's share of the input price.
  const share = (shippedCache: number | undefined) =>
    shipped && shippedCache !== undefined && shipped.inputPerMillion > 0 ? (shippedCache / shipped.inputPerMillion) * input : undefined
  const read = configured.cache_read_price_per_million ?? share(shipped?.cacheReadPerMillion)
  const write = configured.cache_write_price_per_million ?? share(shipped?.cacheWritePerMillion)
  return {
    inputPerMillion: input,
    outputPerMillion: configured.output_price_per_million ?? shipped?.outputPerMillion ?? 0,
    ...(read !== undefined ? { cacheReadPerMillion: read } : {}),
    ...(write !== undefined ? { cacheWritePerMillion: write } : {})
  }
}

/**
 * Models known to take text only, by name (a provider's prefix such as `deepseek/` allowed). Any
 * other model is let try: a provider that refuses the images answers an error the run reports.
 */
const textOnlyModels: ReadonlyArray<RegExp> = [
  /(^|\/)gpt-3\.5/,
  /(^|\/)gpt-4-(0314|0613|32k)/,
  /(^|\/)o1-mini/,
  /(^|\/)o3-mini/,
  /(^|\/)deepseek-(chat|reasoner|coder)/,
  /(^|\/)(text-|davinci|babbage)/
]

/** Whether a target takes images: its configured `vision`, else false for the known text-only models. */
export const acceptsImages = (target: Target): boolean => {
  const configured = target.provider.models.find((m) => m.id === target.model)?.vision
  return configured ?? !textOnlyModels.some((pattern) => pattern.test(target.model))
}

export { costOf }
