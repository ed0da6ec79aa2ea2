/**
 * Runs per credential: how many runs each credential has running in this process, so one caller
 * cannot hold every run slot (RUNS_PER_CREDENTIAL_MAX). A slot is taken before a run starts and
 * given back when the run ends, however it ends; giving it back twice counts once. Per process,
 * like the rate-limit buckets (see docs/architecture.md, "State").
 */
import { Effect } from "effect"
import { TooManyRequests } from "../contract/Errors.ts"

/** One run's place in its credential's count. */
export interface RunSlot {
  readonly credential: string
  /** Gives the place back; only the first call counts. */
  readonly release: Effect.Effect<void>
}

export const makeQuota = () => {
  const running = new Map<string, number>()

  /** A slot for `credential`, or null when it already has `max` runs running. */
  const take = (credential: string, max: number): RunSlot | null => {
    const count = running.get(credential) ?? 0
    if (count >= max) return null
    running.set(credential, count + 1)
    let released = false
    return {
      credential,
      release: Effect.sync(() => {
        if (released) return
        released = true
        const left = (running.get(credential) ?? 1) - 1
        if (left <= 0) running.delete(credential)
        else running.set(credential, left)
      })
    }
  }

  const count = (credential: string) => running.get(credential) ?? 0

  return { take, count } as const
}

/**
 * A credential already running RUNS_PER_CREDENTIAL_MAX runs here: 429. When one will end is not
 * known, so Retry-After says a second (a refused message costs no database work).
 */
export const overRunLimit = (max: number) =>
  new TooManyRequests({
    detail: `This credential already has ${max} runs running (RUNS_PER_CREDENTIAL_MAX); retry when one has finished`,
    retryAfterSeconds: 1
  })
