/** A channel's heartbeat and its runs, as the API shows them. */
import { Schema } from "effect"
import { limitParam, queryParams, storableDate } from "../contract/Params.ts"
import { TimestampText } from "../contract/Time.ts"

/** A local wall-clock time, HH:MM. */
export const clockPattern = /^([01]\d|2[0-3]):([0-5]\d)$/

export const validTimezone = (timezone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone })
    return true
  } catch {
    return false
  }
}

const Clock = Schema.String.pipe(Schema.filter((text) => clockPattern.test(text) || "Expected a local time HH:MM (00:00 to 23:59)"))
const Timezone = Schema.String.pipe(Schema.filter((text) => validTimezone(text) || "Expected an IANA time zone such as Europe/Oslo"))
const Timestamp = Schema.String.pipe(
  Schema.filter((text) => {
    const at = Date.parse(text)
    return (!Number.isNaN(at) && storableDate(new Date(at))) || "Expected an ISO 8601 date-time (years 1 to 9999)"
  })
)

/** `PUT /api/v1/channels/{id}/heartbeat`: the whole heartbeat (every field but the prompt and the cadence has a default). */
export const HeartbeatBody = Schema.Struct({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  prompt: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20_000)),
  /** Every n seconds (at least 1), on a grid from when it was set; or `cron`, not both. */
  interval_seconds: Schema.optionalWith(Schema.NullOr(Schema.Int.pipe(Schema.between(1, 366 * 24 * 3600))), { default: () => null }),
  /** A 5-field (or 6 with seconds) cron expression in `timezone` (checked by the service: the contract carries no cron parser). */
  cron: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))), { default: () => null }),
  timezone: Schema.optionalWith(Timezone, { default: () => "UTC" }),
  /** Local times between which nothing fires (the window may wrap midnight); both or neither. */
  quiet_start: Schema.optionalWith(Schema.NullOr(Clock), { default: () => null }),
  quiet_end: Schema.optionalWith(Schema.NullOr(Clock), { default: () => null }),
  /** No slot after this. */
  ends_at: Schema.optionalWith(Schema.NullOr(Timestamp), { default: () => null }),
  /** Post only an answer with something to say (the bot answers NOTHING_TO_REPORT otherwise). */
  only_when_something: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** A slot missed while no server ran fires once at start. */
  catch_up: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Where the answer is posted (`post_message` of that dispatcher); `none` keeps it in the channel's session only. */
  dispatch_type: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1)), { default: () => "none" }),
  dispatch_config: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { default: () => ({}) })
}).pipe(
  Schema.filter((body) => (body.interval_seconds === null) !== (body.cron === null) || "Give exactly one of interval_seconds and cron"),
  Schema.filter((body) => (body.quiet_start === null) === (body.quiet_end === null) || "Give both quiet_start and quiet_end, or neither")
).annotations({ parseOptions: { errors: "all", onExcessProperty: "error" } })
export type HeartbeatBody = typeof HeartbeatBody.Type

export class Heartbeat extends Schema.Class<Heartbeat>("Heartbeat")({
  channel_id: Schema.String,
  enabled: Schema.Boolean,
  prompt: Schema.String,
  interval_seconds: Schema.NullOr(Schema.Number),
  cron: Schema.NullOr(Schema.String),
  timezone: Schema.String,
  quiet_start: Schema.NullOr(Schema.String),
  quiet_end: Schema.NullOr(Schema.String),
  ends_at: Schema.NullOr(TimestampText),
  only_when_something: Schema.Boolean,
  catch_up: Schema.Boolean,
  dispatch_type: Schema.String,
  /** Secret values masked (sealed in the database). */
  dispatch_config: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The next slot; null when off or past its end. */
  next_at: Schema.NullOr(TimestampText),
  updated_at: TimestampText
}) {}

export const HeartbeatRunStatus = Schema.Literal("running", "posted", "silent", "quiet", "failed")

export class HeartbeatRun extends Schema.Class<HeartbeatRun>("HeartbeatRun")({
  id: Schema.String,
  slot: TimestampText,
  trigger: Schema.Literal("schedule", "catch_up", "manual"),
  /** running; posted; silent (nothing to report, or dispatch none); quiet (in quiet hours, not run); failed. */
  status: HeartbeatRunStatus,
  task_id: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  created_at: TimestampText,
  finished_at: Schema.NullOr(TimestampText)
}) {}

export const HeartbeatRunsQuery = queryParams({
  limit: limitParam()
})
