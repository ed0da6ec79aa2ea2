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
const within = (path: ReadonlyArray<PropertyKey>, prefix: ReadonlyArray<PropertyKey>) =>
  path.length >= prefix.length && prefix.every((part, i) => part === path[i])

const meaningfulIssues = (issues: HttpApiError.HttpApiDecodeError["issues"]) =>
  issues.filter(
    (issue) =>
      !(
        issue.message.startsWith("Expected undefined") &&
        issues.some((other) => other !== issue && !other.message.startsWith("Expected undefined") && within(other.path, issue.path))
      )
  )

/** The 404 detail of a failed `idPath` (an id that is not a UUID), or undefined for any other failure. */
export const notFoundDetail = (error: HttpApiError.HttpApiDecodeError): string | undefined =>
  error.message.startsWith(NOT_FOUND_PATH_ID) ? (error.issues[0]?.message ?? "Not Found") : undefined

export const toValidationError = (error: HttpApiError.HttpApiDecodeError): ValidationError => {
  const where = locationOf(error)
  return new ValidationError({
    detail: meaningfulIssues(error.issues).map(
      (issue) =>
        new ValidationIssue({
          loc: [where, ...issue.path.map((part) => (typeof part === "symbol" ? String(part) : part))],
          msg: issue.message,
          type: issueType(issue._tag)
        })
    )
  })
}

