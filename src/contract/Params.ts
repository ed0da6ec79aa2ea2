/**
 * Schemas for the parts of a request. Path and query schemas carry a title so a decode failure can
 * say where it happened (`loc` starts with "path" or "query"; anything else is "body"). A title,
 * not an identifier: an identifier would make the OpenAPI generator emit a reference and drop the
 * parameter list. Every part reports all of its problems at once, not only the first.
 */
import { Schema } from "effect"

const all = { errors: "all" } as const

export const PATH_ID = "PathParams"
export const QUERY_ID = "QueryParams"
/** The title of `idPath` schemas: their decode failure is a 404, not a 422 (see `DecodeErrors.ts`). */
export const NOT_FOUND_PATH_ID = "NotFoundPathParams"

export const pathParams = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ title: PATH_ID, parseOptions: all })

/**
 * The path `{ id }` of a thing whose id is a UUID, where an id that is not a UUID is simply not
 * found, as the spec says: the decode failure is answered 404 with the same detail as an unknown
 * id (`Task not found: <id>`, or the detail function's text), and the handler only ever sees a
 * UUID. `extra` adds the route's other path parameters.
 */
export const idPath = <const Extra extends Schema.Struct.Fields = Record<never, never>>(
  thing: string | ((id: string) => string),
  extra?: Extra
) => {
  const detail = typeof thing === "string" ? (id: string) => `${thing} not found: ${id}` : thing
  return Schema.Struct({
    id: Schema.UUID.annotations({ message: (issue) => detail(String(issue.actual)) }),
    ...(extra ?? ({} as Extra))
  }).annotations({ title: NOT_FOUND_PATH_ID, parseOptions: all })
}

export const queryParams = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ title: QUERY_ID, parseOptions: all })

/**
 * A request body struct; classes get the same through `bodyOptions` as their annotations (on the
 * encoded side, where the fields are checked).
 */
export const body = <Fields extends Schema.Struct.Fields>(fields: Fields) => Schema.Struct(fields).annotations({ parseOptions: all })

export const bodyOptions = [undefined, undefined, { parseOptions: all }] as const

/** A list's `limit` query parameter: a whole number from 1 to `max`, optional. */
export const limitParam = (max = 500) => Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, max)))

/**
 * The most characters a text field takes when its value is stored in an indexed column (a client
 * id, a name, an external id). A btree entry holds at most 2,704 bytes; 255 characters are at most
 * 1,020 bytes of UTF-8, so a key of two such columns still fits. A longer value is then a 422 that
 * names the field, not a failed INSERT (`index row size … exceeds btree … maximum 2704`) answered 500.
 */
export const INDEXED_TEXT_MAX = 255

/** Text bound for an indexed column: `what` names the field in the message. */
export const indexedText = (what: string, max = INDEXED_TEXT_MAX) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `${what} must be at most ${max} characters` }))

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether an id from outside (a path, a tool's argument) is a UUID, before it meets a uuid column. */
export const isUuid = (id: string): boolean => uuidPattern.test(id)

/** Whether a date is one PostgreSQL stores and compares (years 1 to 9999). */
export const storableDate = (date: Date): boolean => date.getUTCFullYear() >= 1 && date.getUTCFullYear() <= 9999

/** An HTTP header name: a token of RFC 9110's characters. */
export const headerNamePattern = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/

/**
 * Whether text may stand in an HTTP header's value: no control character but a tab (a CR or LF
 * would split the header, or every request made with it would be refused).
 */
// eslint-disable-next-line no-control-regex -- control characters are what is refused
export const isHeaderSafe = (value: string): boolean => !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)
export const headerValueMessage = "A header value cannot hold line breaks or control characters"
