/**
 * What the edge refuses in a JSON body before anything parses it further or stores it: nesting
 * deeper than a limit (a deep body overflows schema decoding and jsonb), and the two characters no
 * stored text may hold, NUL (`\u0000`: PostgreSQL text refuses it) and a lone UTF-16 surrogate
 * (`\ud800` without its pair: not Unicode, refused by jsonb), and lists too long to decode
 * cheaply. A raw NUL or control character is
 * already invalid JSON; raw surrogates cannot arrive in UTF-8. One pass over the text, no parse.
 */

/** Deeper than any body the API takes (workflow definitions and JSON Schemas nest a dozen levels). */
export const MAX_JSON_DEPTH = 64

/**
 * More entries than any one array or object the API takes holds (OpenAI's embedding batch is 2,048
 * inputs). Decoding a list of invalid items costs about 11 µs each on the event loop (every issue
 * is formatted before the 422 keeps 50), so a longer list would stall every other request.
 */
export const MAX_JSON_ENTRIES = 2_048

export type JsonTextProblem =
  | { readonly reason: "too_deep"; readonly at: number }
  | { readonly reason: "nul"; readonly at: number }
  | { readonly reason: "lone_surrogate"; readonly at: number }
  | { readonly reason: "too_many_entries"; readonly at: number }

const hexValue = (text: string, start: number): number => {
  const digits = text.slice(start, start + 4)
  return /^[0-9a-fA-F]{4}$/.test(digits) ? Number.parseInt(digits, 16) : -1
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** The first problem in `text` (read as JSON), or undefined; malformed JSON is left to the parser. */
export const inspectJsonText = (text: string, maxDepth = MAX_JSON_DEPTH, maxEntries = MAX_JSON_ENTRIES): JsonTextProblem | undefined => {
  let depth = 0
  let inString = false
  // Commas seen in each open array or object, by depth.
  const commas = new Uint32Array(maxDepth + 2)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x22 /* " */) inString = false
      else if (c === 0x5c /* \ */) {
        if (text.charCodeAt(i + 1) !== 0x75 /* u */) {
          i++
          continue
        }
        const code = hexValue(text, i + 2)
        if (code === 0) return { reason: "nul", at: i }
        if (isLow(code)) return { reason: "lone_surrogate", at: i }
        if (isHigh(code)) {
          const paired = text.charCodeAt(i + 6) === 0x5c && text.charCodeAt(i + 7) === 0x75 && isLow(hexValue(text, i + 8))
          if (!paired) return { reason: "lone_surrogate", at: i }
          i += 11
          continue
        }
        i += 5
      }
    } else if (c === 0x22) inString = true
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return { reason: "too_deep", at: i }
      commas[depth] = 0
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--
    else if (c === 0x2c /* , */ && depth > 0 && ++commas[depth]! >= maxEntries) return { reason: "too_many_entries", at: i }
  }
  return undefined
}

/** The 422 message for a problem. */
export const jsonTextMessage = (problem: JsonTextProblem, maxDepth = MAX_JSON_DEPTH): string => {
  switch (problem.reason) {
    case "too_deep":
      return `The body nests deeper than ${maxDepth} levels (at character ${problem.at})`
    case "nul":
      return `The body holds a NUL character (\\u0000, at character ${problem.at}), which no stored text may hold`
    case "lone_surrogate":
      return `The body holds a lone UTF-16 surrogate (at character ${problem.at}), which is not Unicode text`
    case "too_many_entries":
      return `A list or object in the body has more than ${MAX_JSON_ENTRIES} entries (at character ${problem.at})`
  }
}
