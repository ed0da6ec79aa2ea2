/**
 * What each credential has running, on every server process together, so one caller cannot hold
 * every run slot (RUNS_PER_CREDENTIAL_MAX). Two things take a slot for as long as they last: a run
 * (a turn of `/chat`, `/v1`, MCP, an integration's run), and a provider call made outside any run
 * (the completion proxy, an integration's LLM access). A credential's runs and those calls share
 * the one cap: a run's own provider calls are counted by its slot, not again. A slot is a row taken
 * under the credential's lock (`RunSlotsRepo.ts`), so N parallel starts never admit more than the
 * cap; it is given back when the run or call ends, however it ends, and giving it back twice counts
 * once. This process renews the slots it holds; those of a process that is gone stop counting once
 * stale (as its runs are closed).
 */
import { Duration, Effect, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import { TooManyRequests } from "../contract/Errors.ts"
import { RunSlotsRepo } from "./RunSlotsRepo.ts"

/** One run's or call's place in its credential's count. */
export interface RunSlot {
  readonly credential: string
  /** Gives the place back; only the first call counts. */
  readonly release: Effect.Effect<void>
}

/** A slot not renewed this long belongs to a process that is gone (the runs' heartbeat lapses as soon: runs/Liveness.ts). */
const staleSeconds = 30
/** How often the slots this process holds are renewed: well within `staleSeconds`. */
const renewal = Schedule.spaced(Duration.seconds(5))

export class RunSlots extends Effect.Service<RunSlots>()("cairn/RunSlots", {
  scoped: Effect.gen(function*() {
    const repo = yield* RunSlotsRepo
    // Names the holder in the row, for an operator reading it; staleness, not this, frees a slot.
    const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    /** The slots this process holds, by id: only these are renewed, so one whose release failed lapses. */
    const held = new Set<string>()

    yield* Effect.forkScoped(
      Effect.suspend(() => repo.renew([...held], staleSeconds)).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Renewing the run slots failed", cause)),
        Effect.repeat(renewal)
      )
    )

    /**
     * Per credential, what this process holds and is asking for. A burst of one credential's calls
     * must not become a burst of transactions that each hold a connection while they queue on the
     * credential's lock (300 proxy calls would empty the pool): here they take the lock one at a
     * time, and once this process alone holds or asks for `max`, the rest are refused with no
     * statement (the rows could only say the same). The rows still decide every admission.
     */
    const locals = new Map<string, Local>()

    type Local = { held: number; asking: number; readonly turn: Effect.Semaphore }
    /** Forgets a credential this process neither holds nor asks for (unless a newer entry replaced it). */
    const forget = (credential: string, local: Local) => {
      if (local.held === 0 && local.asking === 0 && locals.get(credential) === local) locals.delete(credential)
    }

    const takeRow = (credential: string, max: number, local: Local): Effect.Effect<RunSlot | null> =>
      Effect.gen(function*() {
        const id = randomUUID()
        if (!(yield* repo.take({ id, credential, owner, max, staleSeconds }))) return null
        held.add(id)
        local.held++
        const release = Effect.suspend(() => {
          if (!held.delete(id)) return Effect.void
          local.held--
          forget(credential, local)
          // A run's end must not fail for this: a slot not given back stops counting once stale.
          return repo.give(id).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Giving a run slot back failed", cause)))
        })
        return { credential, release }
      })

    /** A slot for `credential`, or null when it already has `max` runs and calls going. */
    const take = (credential: string, max: number): Effect.Effect<RunSlot | null> =>
      Effect.suspend(() => {
        let local = locals.get(credential)
        if (!local) {
          local = { held: 0, asking: 0, turn: Effect.unsafeMakeSemaphore(1) }
          locals.set(credential, local)
        }
        if (local.held + local.asking >= max) return Effect.succeed(null)
        const mine = local
        mine.asking++
        return mine.turn.withPermits(1)(takeRow(credential, max, mine)).pipe(
          Effect.ensuring(Effect.sync(() => {
            mine.asking--
            forget(credential, mine)
          }))
        )
      })

    /** How many runs and calls `credential` has going, on every process. */
    const count = (credential: string) => repo.count(credential, staleSeconds)

    return { take, count } as const
  }),
  dependencies: [RunSlotsRepo.Default]
}) {}

/** The refusal's words, shared by a run's 429 and a provider call's. */
export const overRunLimitDetail = (max: number) =>
  `This credential already has ${max} runs running (RUNS_PER_CREDENTIAL_MAX); retry when one has finished`

/**
 * A credential already running RUNS_PER_CREDENTIAL_MAX runs and calls: 429. When one will end is
 * not known, so Retry-After says a second.
 */
export const overRunLimit = (max: number) => new TooManyRequests({ detail: overRunLimitDetail(max), retryAfterSeconds: 1 })
