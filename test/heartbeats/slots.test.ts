/** A heartbeat's slots, quiet hours and "nothing to report", as pure functions. */
import { describe, expect, it } from "vitest"
import { cronProblem, hasSomethingToSay, inQuietHours, nextSlot, validTimezone } from "../../src/heartbeats/Slots.ts"

const at = (iso: string) => new Date(iso)

describe("heartbeat slots", () => {
  it("keeps an interval on its grid from the anchor, after any gap", () => {
    const cadence = { intervalSeconds: 3600, cron: null, timezone: "UTC" }
    const anchor = at("2026-11-25T08:00:00Z")
    expect(nextSlot(cadence, anchor, at("2026-11-25T07:00:00Z"))).toEqual(anchor)
    expect(nextSlot(cadence, anchor, at("2026-11-25T08:00:00Z"))).toEqual(at("2026-11-25T09:00:00Z"))
    expect(nextSlot(cadence, anchor, at("2026-11-25T13:30:00Z"))).toEqual(at("2026-11-25T14:00:00Z"))
  })

  it("follows a cron expression in the heartbeat's time zone", () => {
    const cadence = { intervalSeconds: null, cron: "0 9 * * 1-5", timezone: "Europe/Oslo" }
    // Wednesday 2026-11-25, 09:00 in Oslo is 08:00 UTC (winter time).
    expect(nextSlot(cadence, at("2026-11-25T00:00:00Z"), at("2026-11-25T07:00:00Z"))).toEqual(at("2026-11-25T08:00:00Z"))
    // Friday after nine: the next is Monday.
    expect(nextSlot(cadence, at("2026-11-25T00:00:00Z"), at("2026-11-27T09:00:00Z"))).toEqual(at("2026-11-30T08:00:00Z"))
    expect(cronProblem("0 9 * * 1-5", "UTC")).toBeNull()
    expect(cronProblem("every day at nine", "UTC")).not.toBeNull()
    expect(validTimezone("America/New_York")).toBe(true)
    expect(validTimezone("Mars/Olympus")).toBe(false)
  })

  it("knows quiet hours in local time, across midnight", () => {
    // 23:30 in Oslo (22:30 UTC): inside 22:00–07:00, outside 08:00–17:00.
    expect(inQuietHours(at("2026-11-25T22:30:00Z"), "Europe/Oslo", "22:00", "07:00")).toBe(true)
    expect(inQuietHours(at("2026-11-25T22:30:00Z"), "Europe/Oslo", "08:00", "17:00")).toBe(false)
    expect(inQuietHours(at("2026-11-25T06:30:00Z"), "Europe/Oslo", "22:00", "07:00")).toBe(false)
    expect(inQuietHours(at("2026-11-25T05:30:00Z"), "Europe/Oslo", "22:00", "07:00")).toBe(true)
    expect(inQuietHours(at("2026-11-25T12:00:00Z"), "UTC", null, null)).toBe(false)
  })

  it("tells an answer with something to say from one without", () => {
    expect(hasSomethingToSay("Two new mails from the landlord.")).toBe(true)
    for (const silent of ["", "  ", "NOTHING_TO_REPORT", "nothing_to_report.", "Nothing to report.", "No updates", "nothing new!"]) {
      expect(hasSomethingToSay(silent)).toBe(false)
    }
  })
})
