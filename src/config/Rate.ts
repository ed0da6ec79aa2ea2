/** Rate expressions of the form `<n>/<unit>` (`100/minute`), as the spec writes them. */
import { Either } from "effect"

export interface RateExpression {
  readonly limit: number
  readonly periodMs: number
  readonly text: string
}

const units: Record<string, number> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000
}

export const parseRate = (raw: string): Either.Either<RateExpression, string> => {
  const match = /^\s*(\d+)\s*\/\s*(second|minute|hour|day)s?\s*$/i.exec(raw)
  if (!match) return Either.left(`Expected a rate like "100/minute" (units: second, minute, hour, day), got "${raw}"`)
  const limit = Number(match[1])
  if (!Number.isSafeInteger(limit) || limit < 1) return Either.left(`Rate limit must be a positive integer, got "${raw}"`)
  const unit = match[2]!.toLowerCase()
  return Either.right({ limit, periodMs: units[unit]!, text: `${limit}/${unit}` })
}
