/**
 * `cairn.inbound` (the SDK's IntegrationInbound) on the server side: the ledger's calls for one
 * integration (its id is the items' source), a routing's runs and passive stores done in the
 * transaction that records the decision. `inboundFace` is its promise face, arguments checked.
 */
import { Effect } from "effect"
import type { Inbound } from "../inbound/Inbound.ts"
import type { ItemRow } from "../inbound/Repo.ts"
import type { InboundEntry, IntegrationInbound, PassiveStore } from "../sdk/Inbound.ts"
import { InvalidArgument, type StartRunOptions } from "../sdk/index.ts"
import type { CallerIdentity } from "./Capabilities.ts"

type StartRun = (
  caller: CallerIdentity,
  options: StartRunOptions,
  inboundId?: string
) => Effect.Effect<{ task_id: string; session_id: string; message_id: string }, unknown>
type StorePassive = (
  caller: CallerIdentity,
  channelId: string,
  content: string,
  metadata: Record<string, unknown>
) => Effect.Effect<{ message_id: string; session_id: string }, unknown>

const entryOf = (row: ItemRow): InboundEntry => ({
  id: row.id,
  external_id: row.external_id,
  state: row.state,
  reason: row.reason,
  attempts: row.attempts,
  last_error: row.last_error,
  payload: row.payload,
  received_at: row.received_at.toISOString()
})

/** The ledger's calls for integrations, over the services they need. */
export const inboundCapability = (inbound: Inbound, startRun: StartRun, storePassive: StorePassive) => {
  const stores = (caller: CallerIdentity, itemId: string, passive: ReadonlyArray<PassiveStore>) =>
    Effect.forEach(passive, (store) => storePassive(caller, store.channelId, store.content, { ...store.metadata, inbound_id: itemId }))
  return {
    receive: (
      caller: CallerIdentity,
      options: { externalId: string; channelId?: string | null; summary?: string; payload?: Record<string, unknown> }
    ) =>
      Effect.map(
        inbound.receive({
          source: caller.id,
          externalId: options.externalId,
          integration: caller.id,
          channelId: options.channelId ?? null,
          summary: (options.summary ?? "").slice(0, 200),
          payload: options.payload ?? {}
        }),
        ({ created, item }) => ({ ...entryOf(item), created, decided: item.state !== "received" && item.state !== "failed" })
      ),
    settle: (
      caller: CallerIdentity,
      id: string,
      state: "ignored" | "passive" | "delivered",
      reason: string | null,
      passive: ReadonlyArray<PassiveStore>
    ) => Effect.map(inbound.settle(id, state, reason, stores(caller, id, passive)), (done) => done !== undefined),
    route: (
      caller: CallerIdentity,
      id: string,
      runs: ReadonlyArray<StartRunOptions>,
      passive: ReadonlyArray<PassiveStore>,
      reason: string | null
    ) =>
      Effect.map(
        inbound.route(
          id,
          reason,
          Effect.all([Effect.forEach(runs, (run) => startRun(caller, run, id)), stores(caller, id, passive)])
        ),
        (done) =>
          done === undefined
            ? { routed: false, runs: [], passive: [] }
            : { routed: true, runs: done.value[0], passive: done.value[1] }
      ),
    fail: (id: string, error: string) =>
      Effect.map(inbound.fail(id, error), (moved) => (moved?.state ?? null) as InboundEntry["state"] | null),
    open: (caller: CallerIdentity, limit: number) => Effect.map(inbound.open(caller.id, limit), (rows) => rows.map(entryOf)),
    get: (caller: CallerIdentity, externalId: string) =>
      Effect.map(inbound.bySource(caller.id, externalId), (row) => (row ? entryOf(row) : null)),
    onRetry: (caller: CallerIdentity, handler: (entry: InboundEntry) => Promise<void>) =>
      inbound.onRetry(caller.id, (row) => Effect.tryPromise(() => handler(entryOf(row))))
  } as const
}

export type InboundCapability = ReturnType<typeof inboundCapability>

const text = (what: string, value: unknown, max: number): string => {
  if (typeof value !== "string" || value.length === 0 || value.length > max || value.includes("\0")) {
    throw new InvalidArgument(`${what} must be a string of 1 to ${max} characters without NUL`)
  }
  return value
}

const passiveList = (passive: ReadonlyArray<PassiveStore> | undefined): ReadonlyArray<PassiveStore> => {
  if (passive === undefined) return []
  if (!Array.isArray(passive)) throw new InvalidArgument("passive must be a list")
  for (const store of passive) {
    text("passive: channelId", store?.channelId, 64)
    if (typeof store.content !== "string" || store.content.includes("\0")) {
      throw new InvalidArgument("passive: content must be a string without NUL")
    }
  }
  return passive
}

/** The promise face, bound to one caller; `call` runs an effect (a thrown check rejects). */
export const inboundFace = (
  capability: InboundCapability,
  caller: CallerIdentity,
  call: <A>(check: () => Effect.Effect<A, unknown>) => Promise<A>
): IntegrationInbound => ({
  receive: (options) => call(() => capability.receive(caller, { ...options, externalId: text("externalId", options?.externalId, 512) })),
  settle: (id, state, options) =>
    call(() => {
      if (!["ignored", "passive", "delivered"].includes(state)) throw new InvalidArgument("state must be ignored, passive or delivered")
      return capability.settle(caller, text("id", id, 64), state, options?.reason ?? null, passiveList(options?.passive))
    }),
  route: (id, options) =>
    call(() => {
      if (!Array.isArray(options?.runs)) throw new InvalidArgument("runs must be a list")
      for (const run of options.runs) text("runs: channelId", run?.channelId, 64)
      return capability.route(caller, text("id", id, 64), options.runs, passiveList(options.passive), options.reason ?? null)
    }),
  fail: (id, error) => call(() => capability.fail(text("id", id, 64), String(error ?? "failed"))),
  open: (options) => call(() => capability.open(caller, Math.min(Math.max(1, options?.limit ?? 100), 1000))),
  get: (externalId) => call(() => capability.get(caller, text("externalId", externalId, 512))),
  onRetry: (handler) => {
    if (typeof handler !== "function") throw new InvalidArgument("onRetry needs a function")
    capability.onRetry(caller, handler)
  }
})
