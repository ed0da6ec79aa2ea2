/**
 * A request that did not match its schema, in the spec's 422 shape: every issue with its `loc`
 * (starting `body`, `path` or `query`), message and type.
 */
import type { HttpApiError } from "@effect/platform"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { NOT_FOUND_PATH_ID, PATH_ID, QUERY_ID } from "../contract/Params.ts"

const issueType = (tag: string): string => {
  switch (tag) {
    case "Missing":
      return "missing"
    case "Unexpected":
      return "extra_forbidden"
    case "Type":
      return "type_error"
    default:
      return "value_error"
  }
}

/** The first line of the formatter's message names the schema: path and query schemas say so. */
const locationOf = (error: HttpApiError.HttpApiDecodeError): string => {
  const first = error.message.split("\n", 1)[0] ?? ""
  if (first.startsWith(PATH_ID)) return "path"
  if (first.startsWith(QUERY_ID)) return "query"
  return "body"
}

/**
 * An optional field with a wrong value fails both union members (the value, and "undefined"); the
 * second says nothing useful, so it is dropped when a real issue stands at the same place or
 * beneath it (a bad entry of an optional record).
 */
const isUndefinedAlternative = (issue: HttpApiError.HttpApiDecodeError["issues"][number]) => issue.message.startsWith("Expected undefined")

const pathKey = (path: ReadonlyArray<PropertyKey>) => JSON.stringify(path.map(String))

/** Linear in the issues: a body of 100,000 bad items must not cost a quadratic pass. */
const meaningfulIssues = (issues: HttpApiError.HttpApiDecodeError["issues"]) => {
  const covered = new Set<string>()
  for (const issue of issues) {
    if (isUndefinedAlternative(issue)) continue
    for (let length = 0; length <= issue.path.length; length++) covered.add(pathKey(issue.path.slice(0, length)))
  }
  return issues.filter((issue) => !(isUndefinedAlternative(issue) && covered.has(pathKey(issue.path))))
}

/** The 404 detail of a failed `idPath` (an id that is not a UUID), or undefined for any other failure. */
export const notFoundDetail = (error: HttpApiError.HttpApiDecodeError): string | undefined =>
  error.message.startsWith(NOT_FOUND_PATH_ID) ? (error.issues[0]?.message ?? "Not Found") : undefined

/** A 422 stays small whatever was sent: this many issues at most, each message cut to this length. */
export const MAX_ISSUES = 50
const MAX_MESSAGE_CHARS = 300

/** A message quotes the value it refused, which may be the whole body. */
const shortened = (message: string) => (message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS)}…`)

export const toValidationError = (error: HttpApiError.HttpApiDecodeError): ValidationError => {
  const where = locationOf(error)
  return new ValidationError({
    detail: meaningfulIssues(error.issues).slice(0, MAX_ISSUES).map(
      (issue) =>
        new ValidationIssue({
          loc: [where, ...issue.path.map((part) => (typeof part === "symbol" ? String(part) : part))],
          msg: shortened(issue.message),
          type: issueType(issue._tag)
        })
    )
  })
}
