/** The budgets' arithmetic, apart from the database: periods in a time zone, matching, fitting, the CLI's bars. */
import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import { applies, type BudgetDefinition, periodOf, usedShare, wouldPass } from "../../src/budgets/Ledger.ts"
import { budgetBar } from "../../src/cli/Budgets.ts"

const oslo = DateTime.zoneUnsafeMakeNamed("Europe/Oslo")
const utc = DateTime.zoneUnsafeMakeNamed("UTC")

const budget = (overrides: Partial<BudgetDefinition> = {}): BudgetDefinition => ({
  id: "b",
  scope: "global",
  target: "",
  period: "day",
  limit_usd: null,
  limit_tokens: 1000,
  action: "block",
  warn_at: 0.8,
  ...overrides
})

const nothing = { spent_usd: 0, spent_tokens: 0, reserved_usd: 0, reserved_tokens: 0 }

describe("budget periods", () => {
  it("start at local midnight and the first of the month, across a daylight-saving change", () => {
    // 29 March 2026: Oslo moves from +01:00 to +02:00, a 23-hour day.
    const at = Date.parse("2026-03-29T12:00:00Z")
    expect(periodOf("day", at, oslo)).toEqual({ start: new Date("2026-03-28T23:00:00Z"), end: new Date("2026-03-29T22:00:00Z") })
    expect(periodOf("month", at, oslo)).toEqual({ start: new Date("2026-02-28T23:00:00Z"), end: new Date("2026-03-31T22:00:00Z") })
    expect(periodOf("day", Date.parse("2026-03-28T23:30:00Z"), utc).start).toEqual(new Date("2026-03-28T00:00:00Z"))
    expect(periodOf("total", at, oslo)).toEqual({ start: new Date(0), end: null })
  })
})

describe("which budgets a call counts against", () => {
  it("matches each scope to its part of the call's context", () => {
    const call = { principalKind: "scoped_key", principalId: "k1", botId: "writer", channelId: "c1" }
    expect(applies(budget(), call)).toBe(true)
    expect(applies(budget({ scope: "bot", target: "writer" }), call)).toBe(true)
    expect(applies(budget({ scope: "bot", target: "other" }), call)).toBe(false)
    expect(applies(budget({ scope: "channel", target: "c1" }), call)).toBe(true)
    expect(applies(budget({ scope: "key", target: "k1" }), call)).toBe(true)
    expect(applies(budget({ scope: "user", target: "k1" }), call)).toBe(false)
    expect(applies(budget({ scope: "user", target: "u1" }), { principalKind: "user", principalId: "u1" })).toBe(true)
    // A key a user made is the user's: their budget counts its calls, not the key's own budget alone.
    expect(applies(budget({ scope: "user", target: "u1" }), { ...call, user: "u1" })).toBe(true)
    expect(applies(budget({ scope: "user", target: "u2" }), { ...call, user: "u1" })).toBe(false)
    expect(applies(budget({ scope: "integration", target: "mailbox" }), { principalKind: "integration", principalId: "mailbox" })).toBe(
      true
    )
  })
})

describe("whether a call's worst case fits", () => {
  it("counts what is spent and what calls in flight reserved, against each limit", () => {
    expect(wouldPass(budget(), { ...nothing, spent_tokens: 500, reserved_tokens: 400 }, { tokens: 100, usd: 0 })).toBeNull()
    expect(wouldPass(budget(), { ...nothing, spent_tokens: 500, reserved_tokens: 400 }, { tokens: 101, usd: 0 })).toBe("tokens")
    const both = budget({ limit_usd: 1 })
    expect(wouldPass(both, { ...nothing, spent_usd: 0.7, reserved_usd: 0.2 }, { tokens: 1, usd: 0.1 })).toBeNull()
    expect(wouldPass(both, { ...nothing, spent_usd: 0.7, reserved_usd: 0.2 }, { tokens: 1, usd: 0.11 })).toBe("usd")
    expect(usedShare(both, { spent_usd: 0.5, spent_tokens: 900 })).toBe(0.9)
  })

  it("draws the CLI's bar: spent, then reserved, of twenty cells", () => {
    expect(budgetBar(500, 250, 1000)).toBe(`[${"#".repeat(10)}${"+".repeat(5)}${".".repeat(5)}]`)
    expect(budgetBar(2000, 10, 1000)).toBe(`[${"#".repeat(20)}]`)
  })
})
