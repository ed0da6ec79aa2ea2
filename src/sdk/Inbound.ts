/**
 * The inbound ledger as an integration sees it (`cairn.inbound`): every item that comes in (a chat
 * message, a mail, a webhook delivery) is recorded once under the source's own id before the
 * source is answered, and decided once. Types only: the live object comes from the server.
 *
 *   received -> ignored | passive | queued -> run -> delivered | failed -> dead
 *
 * `receive` first (a second call with the same id finds the first's record: `created` false);
 * then one decision: `settle` (ignored, passive, delivered by the integration itself) or `route`
 * (queue runs). A decision is final: a replay, a catch-up, a restart or a settings save that
 * `receive`s the item again finds it `decided` and must leave it alone. An item still `received`
 * (the process stopped before deciding) or `failed` is the integration's to act on again:
 * `open()` lists them. After `route`, the item follows its runs and their deliveries; one that
 * exhausted its attempts is a dead letter a person retries or discards. A retried dead letter the
 * integration handles itself (no run answers it yet) is `received` again and handed at once to the
 * handler the integration registered with `onRetry`.
 */
import type { StartRunOptions } from "./Capabilities.ts"

export type InboundState = "received" | "ignored" | "passive" | "queued" | "run" | "delivered" | "failed" | "dead" | "discarded"

export interface InboundEntry {
  readonly id: string
  readonly external_id: string
  readonly state: InboundState
  readonly reason: string | null
  readonly attempts: number
  readonly last_error: string | null
  /** What `receive` was given to act on the item again. */
  readonly payload: Record<string, unknown>
  readonly received_at: string
}

export interface InboundReceipt extends InboundEntry {
  /** True when this call recorded the item; false when its id was recorded before. */
  readonly created: boolean
  /** Whether the item was decided already (anything but received or failed): leave it alone. */
  readonly decided: boolean
}

export interface ReceiveOptions {
  /** The source's own id (a message GUID, a Message-ID, a delivery id): 1 to 512 characters. */
  readonly externalId: string
  readonly channelId?: string | null
  /** One line a person recognises it by in the dead-letter queue. */
  readonly summary?: string
  /** What the integration needs to act on it again (kept as JSON). */
  readonly payload?: Record<string, unknown>
}

/** A message stored in a channel's session without a run, with the decision that says so. */
export interface PassiveStore {
  readonly channelId: string
  readonly content: string
  readonly metadata?: Record<string, unknown>
}

export interface RouteResult {
  /** False when the item was decided before (nothing was done). */
  readonly routed: boolean
  readonly runs: ReadonlyArray<{ readonly task_id: string; readonly session_id: string; readonly message_id: string }>
  readonly passive: ReadonlyArray<{ readonly message_id: string; readonly session_id: string }>
}

export interface IntegrationInbound {
  readonly receive: (options: ReceiveOptions) => Promise<InboundReceipt>
  /**
   * Decides the item without a run: `ignored` (with the reason: unbound, paused, echo ...),
   * `passive` (the stores are written with the decision, all or none) or `delivered` (the
   * integration handed it over itself, a mail's file written). False when it was decided before.
   */
  readonly settle: (
    id: string,
    state: "ignored" | "passive" | "delivered",
    options?: { readonly reason?: string; readonly passive?: ReadonlyArray<PassiveStore> }
  ) => Promise<boolean>
  /** Queues the runs (and writes the passive stores) with the move to `queued`: all or none. */
  readonly route: (
    id: string,
    options: { readonly runs: ReadonlyArray<StartRunOptions>; readonly passive?: ReadonlyArray<PassiveStore>; readonly reason?: string }
  ) => Promise<RouteResult>
  /** A failed attempt of the integration's own handling: `failed` (act on it again), `dead` after the last. */
  readonly fail: (id: string, error: string) => Promise<InboundState | null>
  /** The integration's items still to act on (received or failed), oldest first. */
  readonly open: (options?: { readonly limit?: number }) => Promise<ReadonlyArray<InboundEntry>>
  /** The item recorded under the source's id, if any. */
  readonly get: (externalId: string) => Promise<InboundEntry | null>
  /**
   * Registers (once, from `hooks.ts`; a second call replaces the first) what the integration does
   * with one of its dead letters a person retried that no run answers yet: called at once in the
   * process that took the retry, with the item `received` again (its payload as recorded), it acts
   * on it as on a resumed item (`route`, `settle` or `fail`). Without a handler, or when it
   * rejects, the item waits `received` for the integration's own next pass (`open()`).
   */
  readonly onRetry: (handler: (entry: InboundEntry) => Promise<void>) => void
}
