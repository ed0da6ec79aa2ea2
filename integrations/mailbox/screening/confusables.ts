/**
 * Look-alike letters: text that spells "ignore" with a Cyrillic і and о must match the English
 * patterns, so words that mix scripts are folded to Latin before the patterns run.
 */

/** Latin look-alikes from Cyrillic, Greek and other scripts (NFKC has already folded full-width forms). */
const confusables: Record<string, string> = {
  "а": "a",
  "А": "A",
  "в": "b",
  "В": "B",
  "с": "c",
  "С": "C",
  "е": "e",
  "Е": "E",
  "ё": "e",
  "һ": "h",
  "Н": "H",
  "і": "i",
  "І": "I",
  "ї": "i",
  "ј": "j",
  "Ј": "J",
  "к": "k",
  "К": "K",
  "м": "m",
  "М": "M",
  "о": "o",
  "О": "O",
  "р": "p",
  "Р": "P",
  "ԛ": "q",
  "ѕ": "s",
  "Ѕ": "S",
  "т": "t",
  "Т": "T",
  "у": "y",
  "У": "Y",
  "х": "x",
  "Х": "X",
  "ԁ": "d",
  "ɡ": "g",
  "ո": "n",
  "ս": "u",
  "ѵ": "v",
  "ԝ": "w",
  "α": "a",
  "Α": "A",
  "β": "b",
  "Β": "B",
  "ε": "e",
  "Ε": "E",
  "η": "n",
  "Η": "H",
  "ι": "i",
  "Ι": "I",
  "κ": "k",
  "Κ": "K",
  "μ": "u",
  "Μ": "M",
  "ν": "v",
  "Ν": "N",
  "ο": "o",
  "Ο": "O",
  "ρ": "p",
  "Ρ": "P",
  "τ": "t",
  "Τ": "T",
  "υ": "u",
  "Υ": "Y",
  "χ": "x",
  "Χ": "X",
  "ϲ": "c",
  "ϳ": "j",
  "ӏ": "l",
  "ɩ": "i",
  "ı": "i",
  "ℓ": "l",
  "ⅰ": "i",
  "ⅼ": "l",
  "ǀ": "l",
  "ꓲ": "I",
  "ꓳ": "O",
  "ꓴ": "U"
}
const latinWord = /[A-Za-z]/
/**
 * Folds look-alikes in words that mix scripts (a word of Cyrillic alone is Russian, and stays): a
 * word is folded when it holds a Latin letter, or when every letter of it has a Latin look-alike
 * (an all-Cyrillic "реорlе" spoofing "people").
 */
export const foldConfusables = (text: string): string =>
  text.replace(/[\p{L}\p{M}]+/gu, (word) => {
    const letters = [...word]
    const foldable = letters.filter((c) => confusables[c] !== undefined).length
    if (foldable === 0) return word
    const mixed = letters.some((c) => latinWord.test(c))
    const allFoldable = foldable === letters.length && letters.length >= 3
    return mixed || allFoldable ? letters.map((c) => confusables[c] ?? c).join("") : word
  })
