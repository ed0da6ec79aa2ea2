/**
 * When a heartbeat fires, pure: its slots (an interval from an anchor, or a cron expression in the
 * heartbeat's time zone), its quiet hours (local wall-clock, wrapping midnight), and whether an
 * answer has anything to say.
 */
import { CronExpressionParser } from "cron-parser"
import { clockPattern } from "./Model.ts"

export { validTimezone } from "./Model.ts"

export interface Cadence {
  readonly intervalSeconds: number | null
  readonly cron: string | null
  readonly timezone: string
}

/** A cron expression's problem, or null when it parses. */
export const cronProblem = (expression: string, timezone: string): string | null => {
  try {
    CronExpressionParser.parse(expression, { tz: timezone })
    return null
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/**
 * The first slot strictly after `after`. An interval's slots are `anchor + k × interval`, so a
 * server that was down comes back on the same grid.
 */
export const nextSlot = (cadence: Cadence, anchor: Date, after: Date): Date => {
  if (cadence.cron !== null) {
    return CronExpressionParser.parse(cadence.cron, { tz: cadence.timezone, currentDate: after }).next().toDate()
  }
  const step = cadence.intervalSeconds! * 1000
  const elapsed = after.getTime() - anchor.getTime()
  const k = elapsed < 0 ? 0 : Math.floor(elapsed / step) + 1
  return new Date(anchor.getTime() + k * step)
}

/** Minutes since local midnight of `at` in `timezone`. */
const localMinutes = (at: Date, timezone: string): number => {
  const parts = new Intl.DateTimeFormat("en-GB", { timeZone: timezone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
    .formatToParts(at)
  const hour = Number(parts.find((p) => p.type === "hour")?.value ?? 0)
  const minute = Number(parts.find((p) => p.type === "minute")?.value ?? 0)
  return hour * 60 + minute
}

const minutesOf = (clock: string) => {
  const match = clockPattern.exec(clock)!
  return Number(match[1]) * 60 + Number(match[2])
}

/** Whether `at` falls in the quiet hours [start, end) of `timezone`; a window may wrap midnight (22:00–07:00). */
export const inQuietHours = (at: Date, timezone: string, start: string | null, end: string | null): boolean => {
  if (start === null || end === null) return false
  const now = localMinutes(at, timezone)
  const from = minutesOf(start)
  const to = minutesOf(end)
  if (from === to) return false
  return from < to ? now >= from && now < to : now >= from || now < to
}

/** What a bot answers when it has nothing to report (it is told so in the heartbeat's prompt). */
export const nothingToReport = "NOTHING_TO_REPORT"

/** Whether an answer has something to say: not empty, not the nothing-to-report marker or its words. */
export const hasSomethingToSay = (answer: string): boolean => {
  const text = answer.trim().replace(/[.!]+$/, "").trim()
  return text.length > 0 && text.toUpperCase() !== nothingToReport && !/^(nothing (new )?to report|no updates?|nothing new)$/i.test(text)
}
