/**
 * One inbound message, whichever way it came (webhook, the legacy Socket.IO stream, catch-up), through
 * the same checks in this order: paused, empty, stale (pushed messages only), echo of the bridge's own send,
 * unbound, duplicate (the persisted GUID set), then the routing table per bound channel and the
 * chat's circuit breaker. The GUID is claimed before anything is stored or run, and released if that
 * fails, so a replay never runs twice and a failure can be retried. What the routing decided on
 * arrival is final: a message left alone as `unbound` is recorded so, and neither a replayed webhook
 * nor a catch-up (after the chat was bound, a restart or a settings save) acts on it later. Only the
 * legacy client's live stream decides unbound chats itself (it answers them with the default bot).
 */
import type { BoundChannel, IntegrationContext } from "../../src/sdk/index.ts"
import { type BridgeConfig, readConfig } from "./config.ts"
import { type ChatMessage, contentOf } from "./message.ts"
import { decide, type RouteDecision } from "./routing.ts"
import { bridgeStore } from "./store.ts"

export type Origin = "webhook" | "socket" | "catchup"

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
  readonly handleUnbound?: (message: ChatMessage, config: BridgeConfig) => Promise<InboundResult>
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
  // Remembered, not stored: no later catch-up answers what came while paused or was an echo.
  if (options.paused ?? (await store.paused())) {
    await store.claim(message.guid)
    return { status: "ignored", reason: "paused", guid: message.guid }
  }
  const chatGuid = chatGuidOf(message)
  if (!chatGuid) return { status: "ignored", reason: "no-chat", guid: message.guid }
  const content = contentOf(message)
  if (!content) return { status: "ignored", reason: "empty", guid: message.guid }
  const created = message.dateCreated ?? Date.now()
  const age = Date.now() - created
  if (origin !== "catchup" && age > config.staleMs) return { status: "ignored", reason: "stale", guid: message.guid }
  if (origin === "catchup" && age > config.catchUpMaxAgeMs) return { status: "ignored", reason: "too-old", guid: message.guid }
  if (message.isFromMe && (await store.isEcho(chatGuid, message.text ?? "", message.tempGuid))) {
    await store.claim(message.guid)
    return { status: "ignored", reason: "echo", guid: message.guid }
  }

  if (origin !== "socket") {
    const ignoredAs = await store.ignoredAs(message.guid)
    if (ignoredAs !== undefined) return { status: "ignored", reason: ignoredAs as IgnoreReason, guid: message.guid }
  }
  const channels = await boundChannels(cairn, chatGuid)
  if (channels.length === 0) {
    if (options.handleUnbound) return options.handleUnbound(message, config)
    await store.markIgnored(message.guid, "unbound", config.catchUpMaxAgeMs)
    return { status: "ignored", reason: "unbound", guid: message.guid }
  }
  if (!(await store.claim(message.guid))) return { status: "ignored", reason: "duplicate", guid: message.guid }
  const outcomes: Array<ChannelOutcome> = []
  try {
    const routes = await routeAll(cairn, channels, { text: content, fromMe: message.isFromMe }, config)
    const runs = routes.filter((r) => r.decision.action === "run")
    if (runs.length > 0 && !(await store.allowRun(chatGuid, config.replyLimit, config.replyWindowMs))) {
      cairn.logger.warn(
        `Messaging bridge: the circuit breaker of chat ${chatGuid} is open (over ${config.replyLimit} runs in ${
          config.replyWindowMs / 1000
        } s); the message is not answered`
      )
      await store.advanceCursor(created)
      return { status: "ignored", reason: "circuit-open", guid: message.guid }
    }
    const metadata = {
      msgbridge_guid: message.guid,
      chat_guid: chatGuid,
      sender: message.isFromMe ? "me" : (message.handle?.address ?? null),
      origin
    }
    for (const { bound, decision } of routes) {
      if (decision.action === "run") {
        const started = await cairn.runs.start({ channelId: bound.channel.id, content, dispatchConfig: { chat_guid: chatGuid }, metadata })
        outcomes.push({
          channel_id: bound.channel.id,
          action: "run",
          reason: decision.reason,
          ...(decision.wake_word ? { wake_word: decision.wake_word } : {}),
          task_id: started.task_id,
          message_id: started.message_id
        })
      } else {
        const stored = await cairn.channels.storePassive(bound.channel.id, content, { metadata })
        outcomes.push({ channel_id: bound.channel.id, action: "store", reason: decision.reason, message_id: stored.message_id })
      }
    }
    await store.advanceCursor(created)
    return { status: runs.length > 0 ? "triggered" : "stored", guid: message.guid, channels: outcomes }
  } catch (error) {
    // Nothing done yet: a retry or the catch-up may try again. Something done: never twice.
    if (outcomes.length === 0) await store.release(message.guid)
    throw error
  }
}
