/**
 * A run of this process as it runs: its events numbered and held in memory (all of them, for a
 * rejoin, and those not yet written), the readers following it, and the flags its end reads. Held
 * here and handed over synchronously, so a reader in this process gets every event with no gap and
 * no duplicate.
 */
import { Deferred, Effect } from "effect"
import { type AgentEvent, isTerminal, type SequencedEvent } from "../agent/Events.ts"
import type { GatedWrites } from "../db/Commit.ts"
import type { RunOutcome } from "./Outcome.ts"
import type { EventPush } from "./Sse.ts"

export interface LiveRun {
  readonly id: string
  readonly sessionId: string
  readonly events: Array<SequencedEvent>
  readonly unflushed: Array<SequencedEvent>
  /** When the oldest of `unflushed` was emitted (ms since the epoch). */
  unflushedSince: number
  /**
   * The write the run's body left to commit with its end (its answer, or its partial answer): one
   * statement for both, gated on the end taking the run (fenced, runs/Repo.ts `end`).
   */
  carried: GatedWrites | undefined
  /** The readers following it live: each is handed every batch of events as it is emitted. */
  readonly followers: Set<(items: ReadonlyArray<SequencedEvent>) => void>
  readonly done: Deferred.Deferred<RunOutcome>
  cancelRequested: boolean
  lostLock: boolean
  finished: boolean
  /** One writer of the run's events at a time, so the end never overtakes a background flush. */
  readonly writing: Effect.Semaphore
  partialText: string
}

export const makeLiveRun = (id: string, sessionId: string): Effect.Effect<LiveRun> =>
  Effect.gen(function*() {
    return {
      id,
      sessionId,
      events: [],
      unflushed: [],
      unflushedSince: 0,
      carried: undefined,
      followers: new Set(),
      done: yield* Deferred.make<RunOutcome>(),
      cancelRequested: false,
      lostLock: false,
      finished: false,
      writing: yield* Effect.makeSemaphore(1),
      partialText: ""
    }
  })

/** Numbers `batch` after the run's events and holds it (all, and unwritten); answers the numbered items. */
export const record = (run: LiveRun, batch: ReadonlyArray<AgentEvent>): Array<SequencedEvent> => {
  const items: Array<SequencedEvent> = []
  if (run.unflushed.length === 0) run.unflushedSince = Date.now()
  for (const event of batch) {
    const item = { seq: run.events.length + 1, event }
    run.events.push(item)
    run.unflushed.push(item)
    items.push(item)
    if (event.type === "assistant_text") run.partialText = event.text
  }
  return items
}

/**
 * Numbers a run's last events after its others without holding them: they are written with the
 * run's end and only then added to `events` and handed to its followers.
 */
export const numberClosing = (run: LiveRun, batch: ReadonlyArray<AgentEvent>): Array<SequencedEvent> =>
  batch.map((event, index) => ({ seq: run.events.length + 1 + index, event }))

/**
 * Hands a run of this process's events after `after`, then its live ones until it ends, to
 * `push`; no gap, no duplicate: what the run holds and the follower's registration are one
 * synchronous step, so no event falls between them, and each batch `emit` makes is then handed
 * over as it is made. The follower goes when the caller's scope closes.
 */
export const attach = (run: LiveRun, after: number, push: EventPush) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const held = run.events.filter((item) => item.seq > after)
      if (held.length > 0) push.items(held)
      if (held.some((item) => isTerminal(item.event)) || run.finished) {
        push.end()
        return undefined
      }
      const follower = (items: ReadonlyArray<SequencedEvent>) => {
        push.items(items)
        if (items.some((item) => isTerminal(item.event))) {
          run.followers.delete(follower)
          push.end()
        }
      }
      run.followers.add(follower)
      return follower
    }),
    (follower) => Effect.sync(() => void (follower && run.followers.delete(follower)))
  )
