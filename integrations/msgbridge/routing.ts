/**
 * The routing table, per bound channel (pure, unit-tested):
 *   the account owner's own device (not an echo)  -> run
 *   require_mention off                          -> run
 *   require_mention on, a wake word in the text   -> run
 *   require_mention on, no wake word              -> store passively
 * Wake words come from the bot's name and id (when the binding says so), the binding's own words,
 * and MSGBRIDGE_WAKE_WORDS; matching is a case-insensitive substring.
 */

export interface RouteChannel {
  readonly channel: { readonly id: string; readonly name: string; readonly bot_id: string; readonly require_mention: boolean }
  readonly binding: { readonly wake_words: ReadonlyArray<string>; readonly use_bot_wake_word: boolean }
  /** The bot's display name, when the binding uses it as a wake word. */
  readonly botName?: string | null
}

export type RouteDecision =
  | { readonly action: "run"; readonly reason: "own-device" | "every-message" | "wake-word"; readonly wake_word?: string }
  | { readonly action: "store"; readonly reason: "no-wake-word" }

export const wakeWordsOf = (route: RouteChannel, globalWords: ReadonlyArray<string>): Array<string> => {
  const words = [...route.binding.wake_words, ...globalWords]
  if (route.binding.use_bot_wake_word) words.push(route.channel.bot_id, ...(route.botName ? [route.botName] : []))
  return [...new Set(words.map((w) => w.trim()).filter(Boolean))]
}

export const findWakeWord = (text: string, words: ReadonlyArray<string>): string | undefined => {
  const lower = text.toLocaleLowerCase()
  return words.find((word) => lower.includes(word.toLocaleLowerCase()))
}

export const decide = (
  route: RouteChannel,
  message: { readonly text: string; readonly fromMe: boolean },
  globalWords: ReadonlyArray<string>
): RouteDecision => {
  if (message.fromMe) return { action: "run", reason: "own-device" }
  if (!route.channel.require_mention) return { action: "run", reason: "every-message" }
  const word = findWakeWord(message.text, wakeWordsOf(route, globalWords))
  return word === undefined ? { action: "store", reason: "no-wake-word" } : { action: "run", reason: "wake-word", wake_word: word }
}

/**
 * Splits a long reply into messages of at most `limit` characters, at a paragraph, line, sentence or
 * word boundary when there is one in the second half of the window.
 */
export const splitText = (text: string, limit: number): Array<string> => {
  const parts: Array<string> = []
  let rest = text.trim()
  while (rest.length > limit) {
    const window = rest.slice(0, limit)
    const cut = [/\n\n(?=[^\n]*$)/, /\n(?=[^\n]*$)/, /[.!?]\s(?=[^.!?]*$)/, /\s(?=\S*$)/]
      .map((pattern) => {
        const match = pattern.exec(window)
        return match ? match.index + match[0].length : -1
      })
      .find((index) => index >= limit / 2)
    const at = cut ?? limit
    parts.push(rest.slice(0, at).trim())
    rest = rest.slice(at).trim()
  }
  if (rest) parts.push(rest)
  return parts
}
