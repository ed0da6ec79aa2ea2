/**
 * A point in time in a model: a `Date` in the server, in the typed client and in a repository's row
 * (a row is its model's type side, `Schema.typeSchema`, as the drivers read `timestamptz`), an ISO
 * 8601 string on the wire (`Date.toISOString`).
 */
import { Schema } from "effect"

/** Documented in OpenAPI as `{type: string, format: date-time}`. */
export const Timestamp = Schema.Date.annotations({ jsonSchema: { type: "string", format: "date-time" } })

/** The same, documented as a plain string, as the heartbeat, attachment, backup and trace models always were. */
export const TimestampText = Schema.Date.annotations({ jsonSchema: { type: "string" } })
