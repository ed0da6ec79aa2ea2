/**
 * At most PROVIDER_CONCURRENCY_MAX model calls in flight to one provider (per server process).
 * Past it a call waits for a slot, and freed slots go to the waiting callers in turn
 * (`FairQueue`), so one caller's pile of slow calls cannot starve another caller's single call —
 * which is what the provider's socket pool (`NodeFetch.ts`, 256 per provider, first come first
 * served) did on its own. A slot is held for one attempt: a retry's wait holds none.
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
  readonly waiting: FairQueue<Deferred.Deferred<void>>
}

/**
 * Whose turn a call waits in: the credential that caused it (`caller`, as sessions record their
 * owner), else the principal, else the server's own work by source and bot (a queued task, a
 * channel's heartbeat), so those do not share one lane with every other bot's.
 */
export const callerOf = (usage: UsageContext): string =>
  usage.caller ??
    (usage.principalKind ? `${usage.principalKind}:${usage.principalId ?? ""}` : `${usage.source}:${usage.botId ?? ""}`)

export class ProviderGate extends Effect.Service<ProviderGate>()("cairn/ProviderGate", {
  effect: Effect.gen(function*() {
    const settings = yield* Settings
    const providers = new Map<string, Slots>()

    const slotsOf = (providerId: string, max: number) => {
      let slots = providers.get(providerId)
      if (!slots) {
        slots = { active: 0, max, waiting: new FairQueue() }
        providers.set(providerId, slots)
      }
      slots.max = max
      return slots
    }

    /** Hands free slots to the waiters whose turn it is (also after PROVIDER_CONCURRENCY_MAX grew). */
    const admit = (slots: Slots) => {
      while (slots.active < slots.max) {
        const next = slots.waiting.next()
        if (!next) return
        slots.active++
        Deferred.unsafeDone(next, Exit.void)
      }
    }

    const give = (slots: Slots) =>
      Effect.sync(() => {
        slots.active--
        admit(slots)
      })

    /**
     * Takes a slot, waiting (interruptibly, through `restore`) in the caller's lane when none is
     * free; a waiter interrupted after its slot was handed over gives the slot on.
     */
    const take = (providerId: string, caller: string, restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(settings.get(ProviderConcurrencyMax), (max) => {
        const slots = slotsOf(providerId, max)
        if (slots.active < slots.max && slots.waiting.size === 0) {
          slots.active++
          return Effect.succeed(slots)
        }
        const turn = Deferred.unsafeMake<void>(FiberId.none)
        slots.waiting.push(caller, turn)
        admit(slots)
        return inSpan(restore(Deferred.await(turn)), "ProviderGate.wait", { attributes: { provider: providerId, caller } }).pipe(
          Effect.onInterrupt(() => (slots.waiting.remove(caller, turn) ? Effect.void : give(slots))),
          Effect.as(slots)
        )
      })

    /** Runs `effect` holding one of the provider's slots. */
    const withSlot = (providerId: string, caller: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(take(providerId, caller, restore), (slots) => Effect.ensuring(restore(effect), give(slots)))
      )

    return { withSlot } as const
  }),
  dependencies: [Settings.Default]
}) {}
