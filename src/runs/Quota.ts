/**
 * Runs per credential: how many runs each credential has running, on every server process
 * together, so one caller cannot hold every run slot (RUNS_PER_CREDENTIAL_MAX). A slot is a row
 * taken before a run starts, counted and inserted under the credential's lock (`QuotaRepo.ts`), so
 * N parallel starts never admit more than the cap; it is given back when the run ends, however it
 * ends, and giving it back twice counts once. This process renews the slots of its running runs;
 * those of a process that is gone stop counting once stale (as its runs are closed, `Liveness.ts`).
 */
import { Duration, Effect, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { TooManyRequests } from "../contract/Errors.ts"
import { staleAfter } from "./Liveness.ts"
import { makeOwner, releaseOwner } from "./Owners.ts"
import { QuotaRepo } from "./QuotaRepo.ts"

/** One run's place in its credential's count. */
export interface RunSlot {
  readonly credential: string
  /** Gives the place back; only the first call counts. */
  readonly release: Effect.Effect<void>
}

const staleSeconds = Duration.toSeconds(staleAfter)
/** How often the slots of this process's running runs are renewed: well within `staleAfter`. */
const renewal = Schedule.spaced(Duration.seconds(5))

export class RunQuota extends Effect.Service<RunQuota>()("cairn/RunQuota", {
  scoped: Effect.gen(function*() {
    const repo = yield* QuotaRepo
    const owner = makeOwner()
    yield* Effect.addFinalizer(() => Effect.sync(() => releaseOwner(owner)))
    /** The slots this process holds, by id: only these are renewed, so one whose release failed lapses. */
    const held = new Set<string>()

    yield* Effect.forkScoped(
      Effect.suspend(() => repo.renew([...held], staleSeconds)).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Renewing the run slots failed", cause)),
        Effect.repeat(renewal)
      )
    )

    /** A slot for `credential`, or null when it already has `max` runs running. */
    const take = (credential: string, max: number): Effect.Effect<RunSlot | null> =>
      Effect.gen(function*() {
        const id = randomUUID()
        if (!(yield* repo.take({ id, credential, owner, max, staleSeconds }))) return null
        held.add(id)
        const release = Effect.suspend(() => {
          if (!held.delete(id)) return Effect.void
          // A run's end must not fail for this: a slot not given back stops counting once stale.
          return repo.give(id).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Giving a run slot back failed", cause)))
        })
        return { credential, release }
      })

    /** How many runs `credential` has running, on every process. */
    const count = (credential: string) => repo.count(credential, staleSeconds)

    return { take, count } as const
  }),
  dependencies: [QuotaRepo.Default]
}) {}

/**
 * A credential already running RUNS_PER_CREDENTIAL_MAX runs: 429. When one will end is not known,
 * so Retry-After says a second.
 */
export const overRunLimit = (max: number) =>
  new TooManyRequests({
    detail: `This credential already has ${max} runs running (RUNS_PER_CREDENTIAL_MAX); retry when one has finished`,
    retryAfterSeconds: 1
  })
