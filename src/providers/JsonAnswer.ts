/**
 * A model's JSON answer, read tolerantly. Models without a JSON mode (or ignoring it) wrap the
 * object in code fences or prose, think aloud in `<think>` tags first, or write JavaScript rather
 * than JSON (trailing commas, single or smart quotes, bare keys). The answer is the whole text when
 * it is JSON, else the first balanced object or array in it that parses (repaired if need be) and
 * decodes with the operation's Schema. Pure: asking, and asking again, is `JsonCompletion.ts`.
 */
import { Either, ParseResult, Schema } from "effect"

/** Reasoning some models write inline (DeepSeek R1, Qwen): never part of the answer, braces and all. */
export const withoutThinking = (text: string): string => text.replace(/<think>[\s\S]*?(?:<\/think>|$)/gi, "").trim()

/** Balanced spans tried at most, and starting brackets looked at: a long prose answer costs little. */
const maxSpans = 20
const maxStarts = 200

const closers: Record<string, string> = { "{": "}", "[": "]" }

/** Where the quoted string starting at `start` ends (its closing quote), or -1. */
const stringEnd = (text: string, start: number): number => {
  const quote = text[start]
  for (let at = start + 1; at < text.length; at++) {
    if (text[at] === "\\") at++
    else if (text[at] === quote) return at
  }
  return -1
}

/** The index of the bracket closing the one at `start`, or -1 when it never closes or closes with the wrong one. */
const closingOf = (text: string, start: number): number => {
  const expected: Array<string> = []
  for (let at = start; at < text.length; at++) {
    const c = text[at]!
    if (c === "\"" || c === "'") {
      at = stringEnd(text, at)
      if (at < 0) return -1
    } else if (c === "{" || c === "[") expected.push(closers[c]!)
    else if (c === "}" || c === "]") {
      if (expected.pop() !== c) return -1
      if (expected.length === 0) return at
    }
  }
  return -1
}

/** The balanced `{…}` and `[…]` spans of a text, in order; each is outermost (a span's insides are not listed again). */
export const jsonSpans = (text: string): Array<string> => {
  const spans: Array<string> = []
  let from = 0
  for (let starts = 0; starts < maxStarts && spans.length < maxSpans; starts++) {
    const start = text.slice(from).search(/[{[]/)
    if (start < 0) break
    const end = closingOf(text, from + start)
    if (end < 0) {
      from += start + 1
      continue
    }
    spans.push(text.slice(from + start, end + 1))
    from = end + 1
  }
  return spans
}

const smartQuotes: Record<string, string> = { "\u201c": "\"", "\u201d": "\"", "\u201e": "\"", "\u2018": "'", "\u2019": "'" }
const plainQuotes = (text: string): string => text.replace(/[\u201c\u201d\u201e\u2018\u2019]/g, (q) => smartQuotes[q]!)
const pythonWords: Record<string, string> = { True: "true", False: "false", None: "null" }

/** Raw line breaks and tabs in a string, which JSON wants escaped. */
const escapeControls = (text: string): string => text.replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")

/** A single-quoted string's body as a JSON string: `\'` unescaped, a bare `"` escaped. */
const fromSingleQuoted = (body: string): string => `"${escapeControls(body.replace(/\\'/g, "'").replace(/(?<!\\)"/g, "\\\""))}"`

/**
 * Light repairs of JSON-like text: smart quotes, single-quoted strings, line breaks inside strings,
 * trailing commas, comments, bare keys and Python's True/False/None. Only outside strings, so a
 * string's own text stays as written.
 */
export const repairJson = (text: string): string => {
  const source = plainQuotes(text)
  let out = ""
  for (let at = 0; at < source.length; at++) {
    const c = source[at]!
    const rest = source.slice(at)
    if (c === "\"" || c === "'") {
      const end = stringEnd(source, at)
      if (end < 0) return out + source.slice(at)
      out += c === "\"" ? escapeControls(source.slice(at, end + 1)) : fromSingleQuoted(source.slice(at + 1, end))
      at = end
    } else if (c === "," && /^,\s*[}\]]/.test(rest)) {
      continue
    } else if (rest.startsWith("//")) {
      const newline = rest.indexOf("\n")
      at = newline < 0 ? source.length : at + newline - 1
    } else if (rest.startsWith("/*")) {
      const close = rest.indexOf("*/")
      at = close < 0 ? source.length : at + close + 1
    } else if (/[A-Za-z_$]/.test(c) && !/[\w$]/.test(source[at - 1] ?? "")) {
      const word = /^[A-Za-z_$][\w$]*/.exec(rest)![0]
      out += /^\s*:/.test(source.slice(at + word.length)) ? `"${word}"` : (pythonWords[word] ?? word)
      at += word.length - 1
    } else {
      out += c
    }
  }
  return out
}

const parseStrict = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/** JSON text parsed, repaired first when it does not parse as it is; undefined when neither parses. */
const parseLoose = (text: string): { readonly value: unknown } | undefined => parseStrict(text) ?? parseStrict(repairJson(text))

/** A decode failure in a line a model can act on: each problem's path and message. */
const problemOf = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 3)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ")
    .replace(/\s+/g, " ")
    .slice(0, 300)

/**
 * A reader of answers for `schema`: the decoded value, or what was wrong with the answer (said to
 * the model when it is asked again).
 */
export const readJsonAnswer = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (text: string): Either.Either<A, string> => {
    const answer = withoutThinking(text)
    if (answer === "") return Either.left("the answer was empty")
    let problem: string | undefined
    // The whole text as it is (any JSON value), then each span, repaired if need be; smart quotes
    // as delimiters hide the strings from the span finder, so the spans of the text without them last.
    const plain = plainQuotes(answer)
    const spans = plain === answer ? jsonSpans(answer) : [...jsonSpans(answer), ...jsonSpans(plain)]
    for (const parsed of [parseStrict(answer), ...spans.map(parseLoose)]) {
      if (parsed === undefined) continue
      const decoded = decode(parsed.value)
      if (Either.isRight(decoded)) return Either.right(decoded.right)
      problem ??= `the JSON is not the shape asked for (${problemOf(decoded.left)})`
    }
    return Either.left(problem ?? "the answer holds no JSON")
  }
}
