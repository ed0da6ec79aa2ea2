/** Running the typed client's calls from React, and saying why one failed. */
import { Effect, Either, ParseResult } from "effect"

/** The effect's value, or a rejection with its typed error (not a FiberFailure wrapping it). */
export const runCall = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.either(effect)).then((result) => (Either.isRight(result) ? result.right : Promise.reject(result.left)))

/** One thing wrong with what a form sent: the field it is about (its key, when known) and what is wrong, in words. */
export interface FieldIssue {
  readonly field: string | undefined
  readonly message: string
}

/** `bot_id` → `Bot id`: a field's key as a form's reader would name it. */
export const fieldLabel = (key: string): string => {
  const words = key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ").trim().toLowerCase()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/**
 * A Schema message in words: "Expected a string at least 8 character(s) long, actual \"abc\"" →
 * "must be at least 8 characters long". The one mapping every form's errors go through.
 */
export const issueInWords = (message: string): string => {
  const text = message.split("\n")[0]!.replace(/, actual .*$/s, "").trim()
  const rules: ReadonlyArray<readonly [RegExp, (match: RegExpMatchArray) => string]> = [
    [/^is missing$|^Expected (?:a )?non[- ]empty string$|^Expected string$/, () => "is required"],
    [
      /^Expected a string at least (\d+) character\(s\) long$/,
      (m) => m[1] === "1" ? "is required" : `must be at least ${m[1]} characters long`
    ],
    [/^Expected a string at most (\d+) character\(s\) long$/, (m) => `must be at most ${m[1]} characters long`],
    [/^Expected a string matching the pattern .*$/, () => "contains characters that are not allowed here"],
    [/^Expected an integer$/, () => "must be a whole number"],
    [/^Expected a positive number$/, () => "must be more than 0"],
    [/^Expected a non-negative number$/, () => "must be 0 or more"],
    [/^Expected a UUID$/, () => "must be a UUID"],
    [/^Expected a number between (\S+) and (\S+)$/, (m) => `must be between ${m[1]} and ${m[2]}`],
    [/^Expected a number greater than or equal to (\S+)$/, (m) => `must be ${m[1]} or more`],
    [/^Expected a number less than or equal to (\S+)$/, (m) => `must be ${m[1]} or less`],
    [/^is unexpected.*$/, () => "is not a field this form takes"],
    [/^Expected (.+)$/, (m) => `must be ${m[1]}`]
  ]
  for (const [pattern, words] of rules) {
    const match = text.match(pattern)
    if (match) return words(match)
  }
  return text
}

const isParseError = (error: unknown): error is ParseResult.ParseError => (error as { _tag?: unknown } | null)?._tag === "ParseError"

/**
 * What was wrong with a form's values, field by field: the client's own check (a ParseError before
 * sending) or the server's 422 (`detail`: issues with their `loc`). Empty for any other failure.
 */
export const fieldIssues = (error: unknown): ReadonlyArray<FieldIssue> => {
  if (isParseError(error)) {
    return ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
      field: issue.path.filter((part): part is string => typeof part === "string").at(-1),
      message: issueInWords(issue.message)
    }))
  }
  const detail = (error as { detail?: unknown } | null)?.detail
  if (!Array.isArray(detail)) return []
  return detail.map((issue: { loc?: ReadonlyArray<unknown>; msg?: unknown }) => ({
    field: (issue.loc ?? []).slice(1).filter((part): part is string => typeof part === "string").at(-1),
    message: typeof issue.msg === "string" ? issueInWords(issue.msg) : JSON.stringify(issue)
  }))
}

/**
 * An issue as a sentence: "Password must be at least 8 characters long." A schema's own message is
 * kept as written when it is one already (a capital), or made one when it starts with the field's key.
 */
const sentence = ({ field, message }: FieldIssue): string => {
  const namesField = field !== undefined && message.toLowerCase().startsWith(`${field.toLowerCase()} `)
  const text = /^[A-Z]/.test(message)
    ? message
    : namesField
    ? `${fieldLabel(field)}${message.slice(field.length)}`
    : `${field ? fieldLabel(field) : "The value"} ${message}`
  return /[.!?]$/.test(text) ? text : `${text}.`
}

const sentences = (issues: ReadonlyArray<FieldIssue>) => [...new Set(issues.map(sentence))].join(" ")

/** A refused or failed call as one readable line: the issues in words, the server's `detail`, else the error's message. */
export const describeError = (error: unknown): string => {
  const issues = fieldIssues(error)
  if (issues.length > 0) return sentences(issues)
  const { detail, message } = (typeof error === "object" && error !== null ? error : {}) as { detail?: unknown; message?: unknown }
  if (typeof detail === "string" && detail.length > 0) return detail
  if (typeof message === "string" && message.length > 0) return message
  return String(error)
}

/**
 * A failure split for a form: the issues about the fields it shows go next to those fields (by key),
 * the rest (and any failure that is not about the values) in one line above the buttons.
 */
export const formErrors = (
  error: unknown,
  fields: ReadonlyArray<string>
): { readonly byField: Readonly<Record<string, string>>; readonly other: string | undefined } => {
  const issues = fieldIssues(error)
  if (issues.length === 0) return { byField: {}, other: describeError(error) }
  const byField: Record<string, string> = {}
  const rest: Array<FieldIssue> = []
  for (const issue of issues) {
    if (issue.field !== undefined && fields.includes(issue.field)) byField[issue.field] ??= sentence(issue)
    else rest.push(issue)
  }
  return { byField, other: rest.length > 0 ? sentences(rest) : undefined }
}
