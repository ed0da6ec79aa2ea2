/**
 * The legacy client (deprecated, kept for installations that predate channel bindings): with the
 * server URL and password set, it reads the chat server's Socket.IO event stream. A `new-message`
 * goes through the same checks as a webhook's (stale, echo, duplicate); a chat bound to a channel is
 * routed by its binding, and a chat bound to none is answered in the session of client id
 * `msgbridge:<chat guid>` with MSGBRIDGE_DEFAULT_BOT, when its text holds one of
 * MSGBRIDGE_WAKE_WORDS (every message when there are none). MSGBRIDGE_LEGACY_CLIENT=false turns it off.
 */
import { io } from "socket.io-client"
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { defineWorker } from "../../src/sdk/index.ts"
import { type BridgeConfig, readConfig } from "./config.ts"
import { chatGuidOf, handleMessage, type InboundResult } from "./inbound.ts"
import { ChatMessage, contentOf, decodeOr } from "./message.ts"
import { findWakeWord } from "./routing.ts"
import { bridgeStore } from "./store.ts"

/**
 * The legacy answer to a chat no channel is bound to. Its item (recorded by `handleMessage`) is
 * settled `passive` with the run's task as its reason: the run is in a session of its own, outside
 * a channel, so the ledger does not follow it.
 */
export const legacyUnbound =
  (cairn: IntegrationContext) => async (message: ChatMessage, config: BridgeConfig, inboundId: string): Promise<InboundResult> => {
    const chatGuid = chatGuidOf(message)!
    const content = contentOf(message)
    const store = bridgeStore(cairn.store)
    if (config.wakeWords.length > 0 && !message.isFromMe && findWakeWord(content, config.wakeWords) === undefined) {
      await cairn.inbound.settle(inboundId, "ignored", { reason: "unbound" })
      return { status: "ignored", reason: "unbound", guid: message.guid }
    }
    try {
      const sessionId = await cairn.getOrCreateSession(`msgbridge:${chatGuid}`, config.defaultBot, {
        dispatch_type: "msgbridge",
        chat_guid: chatGuid
      })
      const injected = await cairn.injectMessage(sessionId, content, { source: "msgbridge", runAgent: true, notify: true })
      await cairn.inbound.settle(inboundId, "passive", { reason: `legacy run ${injected.task_id ?? ""}`.trim() })
      if (message.dateCreated) await store.advanceCursor(message.dateCreated)
      return {
        status: "triggered",
        guid: message.guid,
        channels: [{
          channel_id: "",
          action: "run",
          reason: "legacy",
          message_id: injected.message_id,
          ...(injected.task_id ? { task_id: injected.task_id } : {})
        }]
      }
    } catch (error) {
      await cairn.inbound.fail(inboundId, error instanceof Error ? error.message : String(error))
      throw error
    }
  }

export const legacyClient = defineWorker({
  name: "legacy-client",
  description: "Deprecated: reads the chat server's Socket.IO stream (new-message) and answers unbound chats with the default bot",
  singleton: true,
  requiredSettings: ["MSGBRIDGE_SERVER_URL", "MSGBRIDGE_PASSWORD"],
  run: async (cairn, worker) => {
    const config = readConfig(worker.settings)
    if (!config.legacyClient) {
      worker.report({ state: "off (MSGBRIDGE_LEGACY_CLIENT=false)" })
      await new Promise<void>((resolve) => worker.signal.addEventListener("abort", () => resolve(), { once: true }))
      return
    }
    cairn.logger.warn(
      "Messaging bridge: the legacy Socket.IO client is deprecated; bind channels and use the webhook (MSGBRIDGE_LEGACY_CLIENT=false turns it off)"
    )
    const socket = io(config.serverUrl!, {
      query: { password: config.password! },
      transports: ["websocket"],
      reconnectionDelay: 1000,
      reconnectionDelayMax: 30_000
    })
    socket.on("connect", () => worker.report({ state: "connected", at: new Date().toISOString() }))
    socket.on("disconnect", (reason) => {
      worker.report({ state: "disconnected", reason, at: new Date().toISOString() })
      // A disconnect the server chose is not retried by the client on its own: reconnect later.
      if (reason === "io server disconnect") setTimeout(() => !worker.signal.aborted && socket.connect(), 2000)
    })
    socket.on("connect_error", (error) => worker.report({ state: "connect-error", error: error.message, at: new Date().toISOString() }))
    // Messages are handled one at a time, in the order they arrive.
    let queue: Promise<unknown> = Promise.resolve()
    socket.on("new-message", (data: unknown) => {
      queue = queue.then(async () => {
        const decoded = decodeOr(ChatMessage, data)
        if (!decoded.ok) return cairn.logger.warn(`Messaging bridge: a Socket.IO new-message did not decode: ${decoded.error}`)
        try {
          await handleMessage(cairn, decoded.value, "socket", { handleUnbound: legacyUnbound(cairn) })
        } catch (error) {
          cairn.logger.error(`Messaging bridge: a Socket.IO message failed: ${error instanceof Error ? error.message : String(error)}`)
        }
      })
    })
    await new Promise<void>((resolve) => worker.signal.addEventListener("abort", () => resolve(), { once: true }))
    socket.close()
    await queue
  }
})
