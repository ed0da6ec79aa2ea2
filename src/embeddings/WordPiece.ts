/**
 * The BERT WordPiece tokenizer (uncased), as sentence encoders exported to ONNX expect: basic
 * splitting on whitespace and punctuation, lower case without accents, then greedy longest-match
 * word pieces from `vocab.txt` (one token a line; continuations start with "##").
 */

export interface WordPieceVocab {
  readonly ids: ReadonlyMap<string, number>
  readonly cls: number
  readonly sep: number
  readonly unk: number
  readonly pad: number
}

export const parseVocab = (text: string): WordPieceVocab => {
  const ids = new Map<string, number>()
  text.split(/\r?\n/).forEach((token, id) => {
    if (token.length > 0 && !ids.has(token)) ids.set(token, id)
  })
  const special = (name: string) => {
    const id = ids.get(name)
    if (id === undefined) throw new Error(`vocab.txt lacks ${name}`)
    return id
  }
  return { ids, cls: special("[CLS]"), sep: special("[SEP]"), unk: special("[UNK]"), pad: ids.get("[PAD]") ?? 0 }
}

const isPunctuation = (char: string) => /[\p{P}\p{S}]/u.test(char)
const isCjk = (char: string) => /[\u4E00-\u9FFF\u3400-\u4DBF\uF900-\uFAFF]/u.test(char)

/** Whitespace and punctuation splitting, lower case, accents removed. */
export const basicTokens = (text: string): Array<string> => {
  const cleaned = text.toLowerCase().normalize("NFD").replace(/\p{Mn}/gu, "")
  const tokens: Array<string> = []
  let current = ""
  for (const char of cleaned) {
    if (/\s/u.test(char) || /\p{Cc}/u.test(char)) {
      if (current) tokens.push(current)
      current = ""
    } else if (isPunctuation(char) || isCjk(char)) {
      if (current) tokens.push(current)
      tokens.push(char)
      current = ""
    } else {
      current += char
    }
  }
  if (current) tokens.push(current)
  return tokens
}

const MAX_WORD_CHARS = 100

export const wordPieces = (vocab: WordPieceVocab, word: string): Array<number> => {
  if (word.length > MAX_WORD_CHARS) return [vocab.unk]
  const pieces: Array<number> = []
  let start = 0
  while (start < word.length) {
    let end = word.length
    let found: number | undefined
    while (start < end) {
      const piece = (start > 0 ? "##" : "") + word.slice(start, end)
      found = vocab.ids.get(piece)
      if (found !== undefined) break
      end--
    }
    if (found === undefined) return [vocab.unk]
    pieces.push(found)
    start = end
  }
  return pieces
}

/** Token ids with [CLS] and [SEP], truncated to `maxTokens` in all. */
export const encode = (vocab: WordPieceVocab, text: string, maxTokens: number): Array<number> => {
  const ids = [vocab.cls]
  for (const word of basicTokens(text)) {
    for (const id of wordPieces(vocab, word)) {
      if (ids.length >= maxTokens - 1) return [...ids, vocab.sep]
      ids.push(id)
    }
  }
  return [...ids, vocab.sep]
}
