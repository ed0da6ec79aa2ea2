/**
 * At most PROVIDER_CONCURRENCY_MAX model calls in flight to one provider (per server process).
 * Past it a call waits for a slot, and freed slots go to the waiting callers in turn
 * (`FairQueue`), so one caller's pile of slow calls cannot starve another caller's single call —
 * which is what the provider's socket pool (`NodeFetch.ts`, 256 per provider, first come first
 * served) did on its own. A slot is held for one attempt: a retry's wait holds none.
 *
 * A caller is a lane (`callerOf`): a user with all their keys, or a credential no user owns.
 * Each caller's share: a caller that already holds slots takes another only while more than the
 * reserve (an eighth of the slots, at least one when there are two or more) stay free; a caller
 * holding none may take any free slot. Turns alone cannot do this: calls in flight are not taken
 * back, so one key's (or twenty keys') 300 slow calls would hold every slot, and another caller
 * would wait for one of them to end however fair the line. With the reserve, a caller that has
 * nothing in flight always finds a slot unless as many other newcomers took the reserve first.
 */
import { Deferred, Effect, Exit, FiberId } from "effect"
import { ProviderConcurrencyMax } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { inSpan } from "../telemetry/Spans.ts"
import { FairQueue } from "./FairQueue.ts"
import type { UsageContext } from "./Model.ts"

interface Slots {
  active: number
  max: number
  /** Slots in use by caller. */
  readonly held: Map<string, number>
  readonly waiting: FairQueue<Waiter>
}

/** A waiting call: its caller's lane, and the turn it awaits. */
interface Waiter {
  readonly caller: string
  readonly turn: Deferred.Deferred<void>
}

/** The slots kept for callers holding none: an eighth, at least one of two or more. */
export const reserveOf = (max: number): number => (max < 2 ? 0 : Math.max(1, Math.floor(max / 8)))

/** Whether `caller` may take a slot now: one is free, and it holds none or more than the reserve are free. */
const mayTake = (slots: Slots, caller: string): boolean => {
  const free = slots.max - slots.active
  return free > 0 && ((slots.held.get(caller) ?? 0) === 0 || free > reserveOf(slots.max))
}

/**
 * Whose turn a call waits in: the signed-in user it is made for (`user`: their own calls and those
 * of every API key they made share one lane, so twenty keys of one user are served as one caller),
 * else the credential that caused it (`caller`, as sessions record their owner; a key with no
 * owner is its own lane), else the principal, else the server's own work by source and bot (a
 * queued task, a channel's heartbeat), so those do not share one lane with every other bot's.
 */
export const callerOf = (usage: UsageContext): string =>
  usage.user !== undefined
    ? `user:${usage.user}`
    : usage.caller ??
      (usage.principalKind ? `${usage.principalKind}:${usage.principalId ?? ""}` : `${usage.source}:${usage.botId ?? ""}`)

/** The user a principal's calls are made for: a signed-in user, or the one who made the API key. */
export const userOf = (principal: { readonly kind: string; readonly id: string; readonly user?: string | undefined }) =>
  principal.kind === "user" ? principal.id : principal.user

export class ProviderGate extends Effect.Service<ProviderGate>()("cairn/ProviderGate", {
  effect: Effect.gen(function*() {
    const settings = yield* Settings
    const providers = new Map<string, Slots>()

    const slotsOf = (providerId: string, max: number) => {
      let slots = providers.get(providerId)
      if (!slots) {
        slots = { active: 0, max, held: new Map(), waiting: new FairQueue() }
        providers.set(providerId, slots)
      }
      slots.max = max
      return slots
    }

    const hold = (slots: Slots, caller: string) => {
      slots.active++
      slots.held.set(caller, (slots.held.get(caller) ?? 0) + 1)
    }

    /**
     * Hands free slots to the waiters whose turn it is among the callers that may take one (also
     * after PROVIDER_CONCURRENCY_MAX grew).
     */
    const admit = (slots: Slots) => {
      const eligible = (lane: string) => mayTake(slots, lane)
      while (slots.active < slots.max) {
        const next = slots.waiting.next(eligible)
        if (!next) return
        hold(slots, next.caller)
        Deferred.unsafeDone(next.turn, Exit.void)
      }
    }

    const give = (slots: Slots, caller: string) =>
      Effect.sync(() => {
        slots.active--
        const left = (slots.held.get(caller) ?? 1) - 1
        if (left > 0) slots.held.set(caller, left)
        else slots.held.delete(caller)
        admit(slots)
      })

    /**
     * Takes a slot, waiting (interruptibly, through `restore`) in the caller's lane when none is
     * free; a waiter interrupted after its slot was handed over gives the slot on.
     */
    const take = (providerId: string, caller: string, restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(settings.get(ProviderConcurrencyMax), (max) => {
        const slots = slotsOf(providerId, max)
        if (slots.waiting.size === 0 && mayTake(slots, caller)) {
          hold(slots, caller)
          return Effect.succeed(slots)
        }
        const waiter: Waiter = { caller, turn: Deferred.unsafeMake<void>(FiberId.none) }
        slots.waiting.push(caller, waiter)
        admit(slots)
        return inSpan(restore(Deferred.await(waiter.turn)), "ProviderGate.wait", { attributes: { provider: providerId, caller } }).pipe(
          Effect.onInterrupt(() => (slots.waiting.remove(caller, waiter) ? Effect.void : give(slots, caller))),
          Effect.as(slots)
        )
      })

    /** Runs `effect` holding one of the provider's slots. */
    const withSlot = (providerId: string, caller: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(take(providerId, caller, restore), (slots) => Effect.ensuring(restore(effect), give(slots, caller)))
      )

    return { withSlot } as const
  }),
  dependencies: [Settings.Default]
}) {}
