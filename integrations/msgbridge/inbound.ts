/**
 * One inbound message, whichever way it came (webhook, the legacy Socket.IO stream, catch-up, a
 * resume after a restart), through one path: it is recorded in the inbound ledger under its GUID
 * first (`cairn.inbound.receive`), before anything else and before the webhook is answered; a
 * message the ledger knows as decided is left alone (a replay, a catch-up after the chat was
 * bound, a restart, a settings save: what the routing decided on arrival is final). Then the
 * checks, in this order: paused, no chat, empty, stale (pushed messages only) or too old
 * (catch-up), echo of the bridge's own send, unbound, then the routing table per bound channel and
 * the chat's circuit breaker. Each outcome is one move of the ledger's item: `ignored` with its
 * reason, or its runs queued and passive stores written with the move, in one transaction. The
 * GUID set (store.ts) is still fed: the outbound check reads it, and a GUID handled before the
 * ledger existed counts as seen.
 */
import type { BoundChannel, IntegrationContext } from "../../src/sdk/index.ts"
import { type BridgeConfig, readConfig } from "./config.ts"
import { type ChatMessage, contentOf } from "./message.ts"
import { decide, type RouteDecision } from "./routing.ts"
import { bridgeStore } from "./store.ts"

/** How the message came; `retry`: a person retried its dead letter (its age is no reason to leave it). */
export type Origin = "webhook" | "socket" | "catchup" | "retry"

export type IgnoreReason =
  | "paused"
  | "unbound"
  | "duplicate"
  | "echo"
  | "stale"
  | "too-old"
  | "empty"
  | "no-chat"
  | "circuit-open"
  | "event-type"

export interface ChannelOutcome {
  readonly channel_id: string
  readonly action: "run" | "store"
  readonly reason: string
  readonly wake_word?: string
  readonly task_id?: string
  readonly message_id?: string
}

export type InboundResult =
  | { readonly status: "triggered" | "stored"; readonly guid: string; readonly channels: ReadonlyArray<ChannelOutcome> }
  | { readonly status: "ignored"; readonly reason: IgnoreReason; readonly guid?: string }

export const chatGuidOf = (message: ChatMessage) => message.chats[0]?.guid

export const boundChannels = (cairn: IntegrationContext, chatGuid: string) => cairn.channels.bound({ clientId: `msgbridge:${chatGuid}` })

/** The routing decision for every channel bound to the chat (the bot's name resolved for wake words). */
export const routeAll = async (
  cairn: IntegrationContext,
  channels: ReadonlyArray<BoundChannel>,
  message: { readonly text: string; readonly fromMe: boolean },
  config: BridgeConfig
): Promise<Array<{ bound: BoundChannel; decision: RouteDecision }>> =>
  Promise.all(
    channels.map(async (bound) => {
      const botName = bound.binding.use_bot_wake_word ? ((await cairn.getBot(bound.channel.bot_id))?.name ?? null) : null
      return { bound, decision: decide({ ...bound, botName }, message, config.wakeWords) }
    })
  )

export interface HandleOptions {
  /** The settings, when the caller has read them already (read here otherwise). */
  readonly config?: BridgeConfig
  /** Whether the bridge is paused, when the caller has read it already (read here otherwise). */
  readonly paused?: boolean
  /** Takes chats no channel is bound to (the legacy client); without it they are `unbound`. */
  readonly handleUnbound?: (message: ChatMessage, config: BridgeConfig, inboundId: string) => Promise<InboundResult>
}

type Ignored = Extract<InboundResult, { status: "ignored" }>

/** Why a message is left alone before routing (undefined: route it). */
const earlyReason = async (
  cairn: IntegrationContext,
  message: ChatMessage,
  origin: Origin,
  config: BridgeConfig,
  paused: boolean,
  first: boolean
): Promise<IgnoreReason | undefined> => {
  const store = bridgeStore(cairn.store)
  if (paused) return "paused"
  const chatGuid = chatGuidOf(message)
  if (!chatGuid) return "no-chat"
  if (!contentOf(message)) return "empty"
  const age = Date.now() - (message.dateCreated ?? Date.now())
  if ((origin === "webhook" || origin === "socket") && age > config.staleMs) return "stale"
  if (origin === "catchup" && age > config.catchUpMaxAgeMs) return "too-old"
  if (message.isFromMe && (await store.isEcho(chatGuid, message.text ?? "", message.tempGuid))) return "echo"
  // Decided before the ledger existed: an older release's marks still stand (a resumed item made them itself).
  if (!first) return undefined
  const marked = await store.ignoredAs(message.guid)
  if (marked !== undefined) return marked as IgnoreReason
  if (await store.seen(message.guid)) return "duplicate"
  return undefined
}

/** What the bridge does with one message. */
export const handleMessage = async (
  cairn: IntegrationContext,
  message: ChatMessage,
  origin: Origin,
  options: HandleOptions = {}
): Promise<InboundResult> => {
  const config = options.config ?? readConfig(await cairn.settings.all())
  const store = bridgeStore(cairn.store)
  const content = contentOf(message)
  const receipt = await cairn.inbound.receive({
    externalId: message.guid,
    summary: content.slice(0, 120),
    payload: { message, origin }
  })
  if (receipt.decided) {
    const reason = receipt.state === "ignored" && receipt.reason ? (receipt.reason as IgnoreReason) : "duplicate"
    return { status: "ignored", reason, guid: message.guid }
  }
  const ignore = async (reason: IgnoreReason): Promise<Ignored> => {
    await cairn.inbound.settle(receipt.id, "ignored", { reason })
    return { status: "ignored", reason, guid: message.guid }
  }
  const early = await earlyReason(cairn, message, origin, config, options.paused ?? (await store.paused()), receipt.created)
  // The set is fed before any answer: the outbound check knows the message from now on.
  await store.claim(message.guid)
  if (early !== undefined) return ignore(early)
  const chatGuid = chatGuidOf(message)!
  const created = message.dateCreated ?? Date.now()
  const channels = await boundChannels(cairn, chatGuid)
  if (channels.length === 0) return options.handleUnbound ? options.handleUnbound(message, config, receipt.id) : ignore("unbound")
  const routes = await routeAll(cairn, channels, { text: content, fromMe: message.isFromMe }, config)
  const runs = routes.filter((r) => r.decision.action === "run")
  if (runs.length > 0 && !(await store.allowRun(chatGuid, config.replyLimit, config.replyWindowMs))) {
    cairn.logger.warn(
      `Messaging bridge: the circuit breaker of chat ${chatGuid} is open (over ${config.replyLimit} runs in ${
        config.replyWindowMs / 1000
      } s); the message is not answered`
    )
    await store.advanceCursor(created)
    return ignore("circuit-open")
  }
  const metadata = {
    msgbridge_guid: message.guid,
    chat_guid: chatGuid,
    sender: message.isFromMe ? "me" : (message.handle?.address ?? null),
    origin
  }
  const stores = routes.filter((r) => r.decision.action === "store")
  const passive = stores.map(({ bound }) => ({ channelId: bound.channel.id, content, metadata }))
  let done
  try {
    done = runs.length > 0
      ? await cairn.inbound.route(receipt.id, {
        runs: runs.map(({ bound }) => ({ channelId: bound.channel.id, content, dispatchConfig: { chat_guid: chatGuid }, metadata })),
        passive
      })
      : { routed: await cairn.inbound.settle(receipt.id, "passive", { passive }), runs: [], passive: [] }
  } catch (error) {
    // Nothing was done (one transaction): the item stays to be tried again (the catch-up's resume).
    await cairn.inbound.fail(receipt.id, error instanceof Error ? error.message : String(error))
    throw error
  }
  if (!done.routed) return { status: "ignored", reason: "duplicate", guid: message.guid }
  await store.advanceCursor(created)
  const outcomes: Array<ChannelOutcome> = [
    ...runs.map(({ bound, decision }, i) => ({
      channel_id: bound.channel.id,
      action: "run" as const,
      reason: decision.reason,
      ...(decision.action === "run" && decision.wake_word ? { wake_word: decision.wake_word } : {}),
      task_id: done.runs[i]!.task_id,
      message_id: done.runs[i]!.message_id
    })),
    ...stores.map(({ bound, decision }, i) => ({
      channel_id: bound.channel.id,
      action: "store" as const,
      reason: decision.reason,
      ...(done.passive[i] ? { message_id: done.passive[i]!.message_id } : {})
    }))
  ]
  return { status: runs.length > 0 ? "triggered" : "stored", guid: message.guid, channels: outcomes }
}
